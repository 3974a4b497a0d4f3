//! `csv_format` in a build without the `csv` feature: no CSV is written. A service that
//! offers CSV requires the feature (`require!`), so only a spec assembled by hand in code
//! gets here, and is answered 500 with the reason logged.

use crate::caller::Caller;
use crate::problem::Problem;
use crate::spec::ResourceSpec;
use crate::store::Record;
use crate::version::View;

pub(crate) fn csv(spec: &ResourceSpec, _: &View, _: &Caller, _: &[Record]) -> Result<Vec<u8>, Problem> {
    tracing::error!("{} offers CSV, and this build of restgen leaves out its `csv` feature", spec.name);
    Err(Problem::internal())
}
