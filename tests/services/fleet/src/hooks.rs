//! Business rules of Fleet API. Written once by `restgen generate` and never
//! overwritten: regenerating keeps every edit you make here.
