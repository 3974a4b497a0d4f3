//! Bearer tokens: signed at login, verified on every request without a database lookup.

use super::Secrets;
use crate::spec::{AuthSpec, JwtAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

mod crypto;

/// Clock skew tolerated between the instances that issue and verify tokens.
const LEEWAY_SECONDS: u64 = 30;

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    pub sub: String,
    #[serde(default)]
    pub roles: Vec<String>,
    pub exp: u64,
    pub iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
}

/// Keys for the one algorithm the schema declares.
pub(crate) struct Tokens {
    algorithm: Algorithm,
    /// `None` when only a public key is configured: tokens are verified, not issued.
    signing: Option<EncodingKey>,
    /// The current key first, then the previous one during a rotation.
    verifying: Vec<DecodingKey>,
    validation: Validation,
    ttl_seconds: u64,
    issuer: Option<&'static str>,
    audience: Option<&'static str>,
}

impl Tokens {
    pub(crate) fn new(spec: &AuthSpec, secrets: &Secrets) -> Result<Tokens, String> {
        let jwt = &spec.jwt;
        let built = match jwt.algorithm {
            JwtAlgorithm::Hs256 => cfg!(feature = "jwt-hs256"),
            JwtAlgorithm::Rs256 => cfg!(feature = "jwt-rs256"),
            JwtAlgorithm::Es256 => cfg!(feature = "jwt-es256"),
        };
        if !built {
            return Err(super::jwt_absent(jwt.algorithm));
        }
        // Before the first token: every one is signed and checked by this build's families.
        crypto::install();
        let (algorithm, signing, verifying) = match jwt.algorithm {
            JwtAlgorithm::Hs256 => {
                let secret = match &secrets.jwt_secret {
                    Some(s) => s.clone(),
                    None => {
                        tracing::warn!(
                            "{} is not set: bearer tokens are signed with a random secret made for this process; \
                             they stop working when it restarts and no other instance accepts them",
                            jwt.secret_env
                        );
                        super::random_bytes(32)
                    }
                };
                let mut verifying = vec![DecodingKey::from_secret(&secret)];
                verifying.extend(secrets.jwt_previous_secret.iter().map(|s| DecodingKey::from_secret(s)));
                (Algorithm::HS256, Some(EncodingKey::from_secret(&secret)), verifying)
            }
            #[cfg(any(feature = "jwt-rs256", feature = "jwt-es256"))]
            JwtAlgorithm::Rs256 | JwtAlgorithm::Es256 => {
                let rsa = jwt.algorithm == JwtAlgorithm::Rs256;
                let public_env = jwt.public_key_env.unwrap_or("the public key variable");
                let public = secrets
                    .public_key_pem
                    .as_ref()
                    .ok_or_else(|| format!("{public_env} must name the PEM file of the JWT public key"))?;
                let decoding = |pem: &[u8]| {
                    let key = if rsa { DecodingKey::from_rsa_pem(pem) } else { DecodingKey::from_ec_pem(pem) };
                    key.map_err(|e| format!("the JWT public key in {public_env} is not usable: {e}"))
                };
                let mut verifying = vec![decoding(public)?];
                if let Some(previous) = &secrets.previous_public_key_pem {
                    verifying.push(decoding(previous)?);
                }
                let signing = match &secrets.private_key_pem {
                    Some(pem) => {
                        let key = if rsa { EncodingKey::from_rsa_pem(pem) } else { EncodingKey::from_ec_pem(pem) };
                        Some(key.map_err(|e| {
                            format!(
                                "the JWT private key in {} is not usable: {e}",
                                jwt.private_key_env.unwrap_or("the private key variable")
                            )
                        })?)
                    }
                    None => {
                        tracing::warn!(
                            "{} is not set: bearer tokens are verified but not issued here; login answers 503",
                            jwt.private_key_env.unwrap_or("the private key variable")
                        );
                        None
                    }
                };
                (if rsa { Algorithm::RS256 } else { Algorithm::ES256 }, signing, verifying)
            }
            // Refused above; without either family jsonwebtoken is built without PEM keys.
            #[cfg(not(any(feature = "jwt-rs256", feature = "jwt-es256")))]
            JwtAlgorithm::Rs256 | JwtAlgorithm::Es256 => return Err(super::jwt_absent(jwt.algorithm)),
        };
        // Only the declared algorithm: `alg: none` and algorithm confusion (an HS256 token
        // signed with an RS256 public key) fail here.
        let mut validation = Validation::new(algorithm);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        // A claim the schema names is required, not only checked when present: a token
        // minted for another audience by a key shared between services often leaves it out.
        let mut required = vec!["exp", "iat", "sub"];
        required.extend(jwt.issuer.map(|_| "iss"));
        required.extend(jwt.audience.map(|_| "aud"));
        validation.set_required_spec_claims(&required);
        if let Some(iss) = jwt.issuer {
            validation.set_issuer(&[iss]);
        }
        match jwt.audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        Ok(Tokens {
            algorithm,
            signing,
            verifying,
            validation,
            ttl_seconds: jwt.ttl_seconds,
            issuer: jwt.issuer,
            audience: jwt.audience,
        })
    }

    pub(crate) fn can_issue(&self) -> bool {
        self.signing.is_some()
    }

    pub(crate) fn ttl_seconds(&self) -> u64 {
        self.ttl_seconds
    }

    /// A signed token for `sub` with `roles`; `None` without a signing key.
    pub(crate) fn issue(&self, sub: String, roles: Vec<String>) -> Option<String> {
        let now = jsonwebtoken::get_current_timestamp();
        let claims = Claims {
            sub,
            roles,
            iat: now,
            exp: now + self.ttl_seconds,
            iss: self.issuer.map(str::to_owned),
            aud: self.audience.map(str::to_owned),
        };
        let key = self.signing.as_ref()?;
        jsonwebtoken::encode(&Header::new(self.algorithm), &claims, key)
            .inspect_err(|e| tracing::error!(error = %e, "signing a token failed"))
            .ok()
    }

    /// The claims of a valid token; the reason otherwise (for `error_description`).
    pub(crate) fn verify(&self, token: &str) -> Result<Claims, &'static str> {
        let mut last = "the token is not valid";
        for key in &self.verifying {
            match jsonwebtoken::decode::<Claims>(token, key, &self.validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) => {
                    use jsonwebtoken::errors::ErrorKind;
                    last = match e.kind() {
                        ErrorKind::ExpiredSignature => "the token has expired",
                        ErrorKind::ImmatureSignature => "the token is not valid yet",
                        ErrorKind::InvalidIssuer => "the token has the wrong issuer",
                        ErrorKind::InvalidAudience => "the token has the wrong audience",
                        ErrorKind::InvalidAlgorithm => "the token uses an algorithm this service does not accept",
                        ErrorKind::InvalidSignature => "the token's signature is not valid",
                        ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
                            "iss" => "the token names no issuer",
                            "aud" => "the token names no audience",
                            _ => "the token lacks a required claim",
                        },
                        _ => "the token is not valid",
                    };
                    // Only a bad signature may be fixed by the previous key.
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        return Err(last);
                    }
                }
            }
        }
        Err(last)
    }
}
