//! Mode and key type: the two axes of the key prefix table (spec 2.1).

crate::words! {
    /// Every key and every resource lives in exactly one mode; the two never see each other.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum Mode {
        /// Test mode: keys prefixed `pub_test_` or `priv_test_`; sees only test resources.
        Test,
        /// Live mode: keys prefixed `pub_` or `priv_`; real payments, only live resources.
        Live,
    }
}

crate::words! {
    /// Public keys tokenize from client code; private keys have full server-side access.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum KeyType {
        /// Creates single-use tokens from client code, and nothing else (spec 5.3).
        Public,
        /// Full server-side API access (spec 5.4); must never appear in client code.
        Private,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_of_spec_2_1() {
        assert_eq!(
            Mode::ALL
                .iter()
                .copied()
                .map(Mode::as_str)
                .collect::<Vec<_>>(),
            ["test", "live"]
        );
        assert_eq!(
            KeyType::ALL
                .iter()
                .copied()
                .map(KeyType::as_str)
                .collect::<Vec<_>>(),
            ["public", "private"]
        );
        for &mode in Mode::ALL {
            assert_eq!(mode.as_str().parse::<Mode>(), Ok(mode));
        }
        for &key_type in KeyType::ALL {
            assert_eq!(key_type.as_str().parse::<KeyType>(), Ok(key_type));
        }
        assert!("Test".parse::<Mode>().is_err());
        assert!("secret".parse::<KeyType>().is_err());
    }
}
