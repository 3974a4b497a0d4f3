//! Request bodies that are not resources — a sign-up or a login form — read with the same
//! allow-list and rules as a resource's inputs: what `#[derive(Input)]` implements.

use crate::body;
use crate::problem::Problem;
use crate::spec::FieldSpec;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;

/// A body type whose client-settable fields are read from JSON and checked; its other
/// fields are never taken from the client, they hold their defaults.
pub trait Payload: Sized {
    /// The fields a client may send, with their rules.
    #[doc(hidden)]
    const FIELDS: &'static [FieldSpec];
    /// Exactly the fields a client may send.
    #[doc(hidden)]
    type Settable: DeserializeOwned;
    /// The value: the fields sent, and the defaults of the others.
    #[doc(hidden)]
    fn from_settable(settable: Self::Settable) -> Self;

    /// Reads a JSON body: 415 for another media type, 400 naming each field that is
    /// unknown, not settable, of the wrong type or against its rules.
    fn from_json(headers: &HeaderMap, body: Bytes) -> Result<Self, Problem> {
        read(headers, Ok(body))
    }
}

fn read<T: Payload>(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<T, Problem> {
    let object = body::object(headers, body, false)?;
    let settable: T::Settable = body::typed(object.clone())?;
    let errors = crate::validate::fields(T::FIELDS, &object);
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    Ok(T::from_settable(settable))
}

/// An extractor of a [`Payload`] body: `async fn sign_up(Valid(form): Valid<SignUp>)`.
/// A body that is not accepted is answered with its problem.
#[derive(Clone, Debug)]
pub struct Valid<T>(pub T);

impl<S: Send + Sync, T: Payload> FromRequest<S> for Valid<T> {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        // A body over the service's limit is a 413, as for a resource's input.
        let body::HeadersAndBody { headers, body } =
            body::HeadersAndBody::from_request(request, state).await.unwrap_or_else(|n| match n {});
        read(&headers, body).map(Valid)
    }
}
