//! The business rules a service adds to its resources' writes: what a rule may see and
//! answer, and the hooks of one resource (a generated service's `src/hooks.rs`, or rules
//! given to `App::resource_with`). The operations run them; the routes hand them over.

use crate::problem::Problem;
use crate::store::Record;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Bounds of an operation's input type; `()` stands for an operation the resource lacks.
pub trait Input: DeserializeOwned + Serialize + Send + Sync + 'static {}
impl<T: DeserializeOwned + Serialize + Send + Sync + 'static> Input for T {}

/// A rule run on a create's typed input before it is stored: it may change the input or
/// refuse the write with a problem (`Problem::unprocessable` for business rules).
pub type CreateRule<T> = dyn Fn(&mut T) -> Result<(), Problem> + Send + Sync;
/// A rule run on a replace's or patch's typed input, with the record's id.
pub type UpdateRule<T> = dyn Fn(&str, &mut T) -> Result<(), Problem> + Send + Sync;
/// A rule run before a record is deleted, with its id.
pub type DeleteRule = dyn Fn(&str) -> Result<(), Problem> + Send + Sync;
/// A rule that computes what the server owns from the whole record about to be stored
/// (an order's total from its line items), at create and at every replace or patch. It
/// may change any field; the id, the owner and the timestamps stay as the server set
/// them, and what it changes is held to the fields' rules (422 otherwise).
pub type ComputeRule = dyn Fn(&mut Record) -> Result<(), Problem> + Send + Sync;
/// A rule run before a transition, with the record's id, the transition's name and the
/// record as stored: refuse with a problem to keep the record where it is (422 for a
/// business rule, 502/504 when an upstream it asked failed).
pub type TransitionRule = dyn Fn(&str, &str, &Record) -> Result<(), Problem> + Send + Sync;

/// The hooks of one resource (from a generated service's `src/hooks.rs`, or given to
/// `App::resource_with`).
pub struct Hooks<C, R, P> {
    pub before_create: Option<Arc<CreateRule<C>>>,
    pub before_replace: Option<Arc<UpdateRule<R>>>,
    pub before_patch: Option<Arc<UpdateRule<P>>>,
    pub before_delete: Option<Arc<DeleteRule>>,
    pub before_transition: Option<Arc<TransitionRule>>,
    pub compute: Option<Arc<ComputeRule>>,
}

impl<C, R, P> Default for Hooks<C, R, P> {
    fn default() -> Self {
        Hooks {
            before_create: None,
            before_replace: None,
            before_patch: None,
            before_delete: None,
            before_transition: None,
            compute: None,
        }
    }
}

impl<C, R, P> Hooks<C, R, P> {
    /// Runs `rule` on a create's typed input before it is stored.
    pub fn before_create(mut self, rule: impl Fn(&mut C) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_create = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` on a replace's typed input, with the record's id.
    pub fn before_replace(
        mut self,
        rule: impl Fn(&str, &mut R) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        self.before_replace = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` on a patch's typed input, with the record's id.
    pub fn before_patch(mut self, rule: impl Fn(&str, &mut P) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_patch = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` before a record is deleted, with its id.
    pub fn before_delete(mut self, rule: impl Fn(&str) -> Result<(), Problem> + Send + Sync + 'static) -> Self {
        self.before_delete = Some(Arc::new(rule));
        self
    }

    /// Runs `rule` before a transition, with the record's id, the transition's name and
    /// the record as the type `T` (the resource's representation): refuse with a problem
    /// to keep the record where it is.
    pub fn before_transition<T: DeserializeOwned>(
        mut self,
        rule: impl Fn(&str, &str, &T) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        // A stored record that does not read as `T` is a fault (500).
        self.before_transition = Some(Arc::new(move |id: &str, name: &str, record: &Record| {
            let typed: T = serde_json::from_value(serde_json::Value::from(record.clone())).map_err(|e| {
                tracing::error!(error = %e, "a stored record does not read as the hook's type");
                Problem::internal()
            })?;
            rule(id, name, &typed)
        }));
        self
    }

    /// Computes fields the server owns on the record as the type `T` (a derived struct,
    /// which is the record's representation): `rule` sees the record about to be stored
    /// and changes what it computes. A record that does not read as `T` is a 400 naming
    /// the field (a line item of the wrong shape, say).
    pub fn compute<T: Serialize + DeserializeOwned>(
        mut self,
        rule: impl Fn(&mut T) -> Result<(), Problem> + Send + Sync + 'static,
    ) -> Self {
        self.compute = Some(Arc::new(move |record: &mut Record| {
            let mut typed: T = crate::body::typed(record.clone().into_map())?;
            rule(&mut typed)?;
            match serde_json::to_value(typed) {
                Ok(serde_json::Value::Object(fields)) => record.extend(fields),
                _ => return Err(Problem::internal()),
            }
            Ok(())
        }));
        self
    }
}

/// The methods of a service's hooks object that run on one resource's writes: what
/// generated routes hand [`Hooks::of`], one method of the service's `Hooks` trait for each
/// write the resource has (`None` for one it lacks), so the routes name methods instead of
/// spelling a closure around each.
pub struct HookMethods<H, C, R, P, T = ()> {
    pub before_create: Option<CreateMethod<H, C>>,
    pub before_replace: Option<UpdateMethod<H, R>>,
    pub before_patch: Option<UpdateMethod<H, P>>,
    pub before_delete: Option<DeleteMethod<H>>,
    /// With the record as the type `T` (the resource's representation).
    pub before_transition: Option<TransitionMethod<H, T>>,
}

/// A method of hooks object `H` run on a create's typed input.
pub type CreateMethod<H, C> = fn(&H, &mut C) -> Result<(), Problem>;
/// A method of `H` run on a replace's or patch's typed input, with the record's id.
pub type UpdateMethod<H, T> = fn(&H, &str, &mut T) -> Result<(), Problem>;
/// A method of `H` run before a record is deleted, with its id.
pub type DeleteMethod<H> = fn(&H, &str) -> Result<(), Problem>;
/// A method of `H` run before a transition: the record's id, the transition's name, the
/// record as `T`.
pub type TransitionMethod<H, T> = fn(&H, &str, &str, &T) -> Result<(), Problem>;

impl<C: 'static, R: 'static, P: 'static> Hooks<C, R, P> {
    /// `methods` of `hooks` as this resource's hooks.
    pub fn of<H: Send + Sync + 'static, T: DeserializeOwned + 'static>(
        hooks: &Arc<H>,
        methods: HookMethods<H, C, R, P, T>,
    ) -> Self {
        let HookMethods { before_create, before_replace, before_patch, before_delete, before_transition } = methods;
        // Each method bound to the service's hooks object, through the builder a service
        // written by hand uses.
        let mut out = Hooks::default();
        if let Some(m) = before_create {
            let h = hooks.clone();
            out = out.before_create(move |input| m(&h, input));
        }
        if let Some(m) = before_replace {
            let h = hooks.clone();
            out = out.before_replace(move |id, input| m(&h, id, input));
        }
        if let Some(m) = before_patch {
            let h = hooks.clone();
            out = out.before_patch(move |id, input| m(&h, id, input));
        }
        if let Some(m) = before_delete {
            let h = hooks.clone();
            out = out.before_delete(move |id| m(&h, id));
        }
        if let Some(m) = before_transition {
            let h = hooks.clone();
            out = out.before_transition(move |id, name, record: &T| m(&h, id, name, record));
        }
        out
    }
}

impl<C: 'static, R: 'static, P: 'static> Hooks<C, R, P> {
    /// The same hooks of `resource`, each run within a span of its own, which a trace shows
    /// ([`crate::traces::hook`]).
    pub(crate) fn traced(self, resource: &'static str) -> Self {
        use crate::traces;
        let span = |hook: &'static str| {
            let name = traces::hook_name(resource, hook);
            move || traces::hook(&name, resource, hook)
        };
        Hooks {
            before_create: self.before_create.map(|rule| {
                let span = span("before_create");
                Arc::new(move |input: &mut C| span().in_scope(|| rule(input))) as Arc<CreateRule<C>>
            }),
            before_replace: self.before_replace.map(|rule| {
                let span = span("before_replace");
                Arc::new(move |id: &str, input: &mut R| span().in_scope(|| rule(id, input))) as Arc<UpdateRule<R>>
            }),
            before_patch: self.before_patch.map(|rule| {
                let span = span("before_patch");
                Arc::new(move |id: &str, input: &mut P| span().in_scope(|| rule(id, input))) as Arc<UpdateRule<P>>
            }),
            before_delete: self.before_delete.map(|rule| {
                let span = span("before_delete");
                Arc::new(move |id: &str| span().in_scope(|| rule(id))) as Arc<DeleteRule>
            }),
            before_transition: self.before_transition.map(|rule| {
                let span = span("before_transition");
                Arc::new(move |id: &str, name: &str, record: &Record| span().in_scope(|| rule(id, name, record)))
                    as Arc<TransitionRule>
            }),
            compute: self.compute.map(|rule| {
                let span = span("compute");
                Arc::new(move |record: &mut Record| span().in_scope(|| rule(record))) as Arc<ComputeRule>
            }),
        }
    }
}
