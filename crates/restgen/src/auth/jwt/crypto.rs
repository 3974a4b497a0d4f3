//! The cryptography jsonwebtoken signs and verifies with, one family per cargo feature:
//! HMAC with SHA-2 (`jwt-hs256`, on the `hmac` and `sha2` the webhooks already build), RSA
//! PKCS #1 v1.5 (`jwt-rs256`, the `rsa` crate), ECDSA on P-256 (`jwt-es256`, `p256`).
//! jsonwebtoken's own RustCrypto provider compiles RSA, P-256, P-384 and Ed25519 whichever
//! one a service uses; this one compiles what the schema's `auth.jwt.algorithm` names.
//!
//! It is installed as jsonwebtoken's process-wide provider before the first token is
//! signed or verified, unless the program installed one of its own before. An algorithm
//! this build leaves out is an error, never a panic: [`Validation`](jsonwebtoken::Validation)
//! accepts only the schema's algorithm, so no token of another reaches here from a request.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, EncodingKey};

/// The provider of this build's families.
static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: signer,
    verifier_factory: verifier,
    // JWKs are never read: keys come from PEM files and secrets.
    key_utils: KeyUtils::new_unimplemented(),
};

/// Makes this build's families jsonwebtoken's provider, once; a provider the program
/// installed first stays.
pub(super) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = CryptoProvider::install_default(&PROVIDER);
    });
}

/// `key` must be of `family`, as jsonwebtoken's own provider requires: an HMAC secret is
/// never taken for a public key, whatever the token's header says.
fn of(family: AlgorithmFamily, key_family: AlgorithmFamily) -> Result<(), Error> {
    if family == key_family { Ok(()) } else { Err(ErrorKind::InvalidKeyFormat.into()) }
}

/// Says which algorithm a family's signer or verifier signs with.
macro_rules! family {
    ($role:ident for $type:ident: $algorithm:ident) => {
        impl $role for $type {
            fn algorithm(&self) -> jsonwebtoken::Algorithm {
                jsonwebtoken::Algorithm::$algorithm
            }
        }
    };
}

fn signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    match algorithm {
        #[cfg(feature = "jwt-hs256")]
        Algorithm::HS256 => {
            of(AlgorithmFamily::Hmac, key.family())?;
            Ok(Box::new(hs256::Key::new(key.as_bytes())?))
        }
        #[cfg(feature = "jwt-rs256")]
        Algorithm::RS256 => {
            of(AlgorithmFamily::Rsa, key.family())?;
            Ok(Box::new(rs256::Signing::new(key.as_bytes())?))
        }
        #[cfg(feature = "jwt-es256")]
        Algorithm::ES256 => {
            of(AlgorithmFamily::Ec, key.family())?;
            Ok(Box::new(es256::Signing::new(key.as_bytes())?))
        }
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    match algorithm {
        #[cfg(feature = "jwt-hs256")]
        Algorithm::HS256 => {
            of(AlgorithmFamily::Hmac, key.family())?;
            Ok(Box::new(hs256::Key::new(key.try_get_as_bytes()?)?))
        }
        #[cfg(feature = "jwt-rs256")]
        Algorithm::RS256 => {
            of(AlgorithmFamily::Rsa, key.family())?;
            Ok(Box::new(rs256::Verifying::new(key)?))
        }
        #[cfg(feature = "jwt-es256")]
        Algorithm::ES256 => {
            of(AlgorithmFamily::Ec, key.family())?;
            Ok(Box::new(es256::Verifying::new(key.try_get_as_bytes()?)?))
        }
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

#[cfg(feature = "jwt-hs256")]
mod hs256 {
    use super::{Error, ErrorKind, JwtSigner, JwtVerifier, Signer, Verifier, signature};
    use hmac::{Hmac, Mac};

    /// The secret, keyed into HMAC-SHA-256 once.
    pub(super) struct Key(Hmac<sha2::Sha256>);

    impl Key {
        pub(super) fn new(secret: &[u8]) -> Result<Key, Error> {
            Ok(Key(Hmac::new_from_slice(secret).map_err(|_| ErrorKind::InvalidKeyFormat)?))
        }
    }

    impl Signer<Vec<u8>> for Key {
        fn try_sign(&self, message: &[u8]) -> Result<Vec<u8>, signature::Error> {
            Ok(self.0.clone().chain_update(message).finalize().into_bytes().to_vec())
        }
    }

    impl Verifier<Vec<u8>> for Key {
        /// In constant time (`verify_slice`).
        fn verify(&self, message: &[u8], tag: &Vec<u8>) -> Result<(), signature::Error> {
            self.0.clone().chain_update(message).verify_slice(tag).map_err(|_| signature::Error::new())
        }
    }

    family!(JwtSigner for Key: HS256);
    family!(JwtVerifier for Key: HS256);
}

#[cfg(feature = "jwt-rs256")]
mod rs256 {
    use super::{Error, ErrorKind, JwtSigner, JwtVerifier, Signer, Verifier, signature};
    use jsonwebtoken::{DecodingKey, DecodingKeyKind};
    use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
    use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
    use rsa::signature::{RandomizedSigner, SignatureEncoding};
    use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};
    use sha2::Sha256;

    /// A private key (PKCS #1 DER, as jsonwebtoken reads it from PEM).
    pub(super) struct Signing(SigningKey<Sha256>);

    impl Signing {
        pub(super) fn new(der: &[u8]) -> Result<Signing, Error> {
            let key = RsaPrivateKey::from_pkcs1_der(der).map_err(|e| ErrorKind::InvalidRsaKey(e.to_string()))?;
            Ok(Signing(SigningKey::new(key)))
        }
    }

    impl Signer<Vec<u8>> for Signing {
        /// Blinded with fresh randomness, so the time a signature takes says nothing of
        /// the key (signing unblinded is what timing attacks on RSA measure).
        fn try_sign(&self, message: &[u8]) -> Result<Vec<u8>, signature::Error> {
            let signed = self.0.try_sign_with_rng(&mut rsa::rand_core::OsRng, message);
            Ok(signed.map_err(signature::Error::from_source)?.to_vec())
        }
    }

    /// A public key, as PKCS #1 DER or as its modulus and exponent.
    pub(super) struct Verifying(VerifyingKey<Sha256>);

    impl Verifying {
        pub(super) fn new(key: &DecodingKey) -> Result<Verifying, Error> {
            let public = match key.kind() {
                DecodingKeyKind::SecretOrDer(der) => RsaPublicKey::from_pkcs1_der(der).map_err(|e| e.to_string()),
                DecodingKeyKind::RsaModulusExponent { n, e } => {
                    RsaPublicKey::new(BigUint::from_bytes_be(n), BigUint::from_bytes_be(e)).map_err(|e| e.to_string())
                }
            };
            Ok(Verifying(VerifyingKey::new(public.map_err(ErrorKind::InvalidRsaKey)?)))
        }
    }

    impl Verifier<Vec<u8>> for Verifying {
        fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
            let signature = Signature::try_from(signature.as_slice()).map_err(signature::Error::from_source)?;
            rsa::signature::Verifier::verify(&self.0, message, &signature).map_err(signature::Error::from_source)
        }
    }

    family!(JwtSigner for Signing: RS256);
    family!(JwtVerifier for Verifying: RS256);
}

#[cfg(feature = "jwt-es256")]
mod es256 {
    use super::{Error, ErrorKind, JwtSigner, JwtVerifier, Signer, Verifier, signature};
    use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
    use p256::pkcs8::DecodePrivateKey;

    /// A private key (PKCS #8 DER, as jsonwebtoken reads it from PEM). Signatures are
    /// deterministic (RFC 6979): no randomness to run short of.
    pub(super) struct Signing(SigningKey);

    impl Signing {
        pub(super) fn new(der: &[u8]) -> Result<Signing, Error> {
            Ok(Signing(SigningKey::from_pkcs8_der(der).map_err(|_| ErrorKind::InvalidEcdsaKey)?))
        }
    }

    impl Signer<Vec<u8>> for Signing {
        /// `r || s`, 64 bytes, as JWS has it (RFC 7518 §3.4).
        fn try_sign(&self, message: &[u8]) -> Result<Vec<u8>, signature::Error> {
            let signed: Signature = p256::ecdsa::signature::Signer::try_sign(&self.0, message)?;
            Ok(signed.to_bytes().to_vec())
        }
    }

    /// A public key, as the uncompressed point jsonwebtoken reads from PEM.
    pub(super) struct Verifying(VerifyingKey);

    impl Verifying {
        pub(super) fn new(point: &[u8]) -> Result<Verifying, Error> {
            Ok(Verifying(VerifyingKey::from_sec1_bytes(point).map_err(|_| ErrorKind::InvalidEcdsaKey)?))
        }
    }

    impl Verifier<Vec<u8>> for Verifying {
        fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
            let signature = Signature::from_slice(signature)?;
            p256::ecdsa::signature::Verifier::verify(&self.0, message, &signature)
        }
    }

    family!(JwtSigner for Signing: ES256);
    family!(JwtVerifier for Verifying: ES256);
}

#[cfg(test)]
mod tests {
    //! Each family signs what jsonwebtoken's own RustCrypto provider verifies and verifies
    //! what it signs: the same tokens on the wire, whichever provider a process runs.

    use super::*;
    use jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER as RUST_CRYPTO;

    const KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/keys");

    fn pem(name: &str) -> Vec<u8> {
        std::fs::read(format!("{KEYS}/{name}")).unwrap()
    }

    /// The keys of each algorithm the schema can name: signing, verifying.
    fn keys() -> Vec<(Algorithm, EncodingKey, DecodingKey)> {
        let secret = b"a secret of thirty-two bytes or more, for HS256";
        vec![
            (Algorithm::HS256, EncodingKey::from_secret(secret), DecodingKey::from_secret(secret)),
            (
                Algorithm::RS256,
                EncodingKey::from_rsa_pem(&pem("rsa-private.pem")).unwrap(),
                DecodingKey::from_rsa_pem(&pem("rsa-public.pem")).unwrap(),
            ),
            (
                Algorithm::ES256,
                EncodingKey::from_ec_pem(&pem("ec-private.pem")).unwrap(),
                DecodingKey::from_ec_pem(&pem("ec-public.pem")).unwrap(),
            ),
        ]
    }

    #[test]
    fn each_family_agrees_with_rust_crypto_both_ways() {
        let message = b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0";
        for (algorithm, signing, verifying) in keys() {
            let ours = signer(&algorithm, &signing).unwrap().try_sign(message).unwrap();
            let theirs = (RUST_CRYPTO.signer_factory)(&algorithm, &signing).unwrap().try_sign(message).unwrap();
            let check = |provider: &CryptoProvider, signature: &Vec<u8>, message: &[u8]| {
                (provider.verifier_factory)(&algorithm, &verifying).unwrap().verify(message, signature).is_ok()
            };
            assert!(check(&RUST_CRYPTO, &ours, message), "{algorithm:?}: ours, verified by RustCrypto");
            assert!(check(&PROVIDER, &theirs, message), "{algorithm:?}: RustCrypto's, verified by ours");
            assert!(check(&PROVIDER, &ours, message), "{algorithm:?}: ours, by ours");
            assert!(!check(&PROVIDER, &ours, b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0"), "{algorithm:?}: altered");
            let mut flipped = ours.clone();
            flipped[0] ^= 1;
            assert!(!check(&PROVIDER, &flipped, message), "{algorithm:?}: a signature altered");
            assert!(!check(&PROVIDER, &ours[..ours.len() - 1].to_vec(), message), "{algorithm:?}: cut short");
        }
    }

    #[test]
    fn a_key_of_another_family_is_refused_whatever_the_header_says() {
        // Algorithm confusion: the RSA public key's bytes taken as an HMAC secret.
        let public = DecodingKey::from_rsa_pem(&pem("rsa-public.pem")).unwrap();
        let refused = verifier(&Algorithm::HS256, &public).err().expect("an RSA key is no HMAC secret");
        assert!(matches!(refused.kind(), ErrorKind::InvalidKeyFormat), "{refused:?}");
        let secret = EncodingKey::from_secret(b"secret");
        assert!(signer(&Algorithm::RS256, &secret).is_err());
        assert!(signer(&Algorithm::ES256, &secret).is_err());
    }

    #[test]
    fn an_algorithm_no_schema_names_is_an_error_not_a_panic() {
        let secret = EncodingKey::from_secret(b"secret");
        for algorithm in [Algorithm::HS384, Algorithm::HS512, Algorithm::PS256, Algorithm::ES384, Algorithm::EdDSA] {
            let refused = signer(&algorithm, &secret).err().expect("not this build's");
            assert!(matches!(refused.kind(), ErrorKind::InvalidAlgorithm), "{algorithm:?}: {refused:?}");
        }
    }
}
