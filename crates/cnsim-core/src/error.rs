//! Errors of the engine. Configuration errors carry the dotted key path, the value and what is
//! allowed, so the Python front end can show them unchanged (exit status 2).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// The core config is not valid JSON or does not match the schema (fatal for the run).
    #[error("invalid core config: {0}")]
    Parse(String),
    /// A value is out of range or names something that does not exist (fatal for the run).
    #[error("{key} = {value}: {expected}")]
    Config {
        key: String,
        value: String,
        expected: String,
    },
    /// The run was interrupted through its [`crate::RunControl`] (not an error of the model).
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    pub fn config(
        key: impl Into<String>,
        value: impl ToString,
        expected: impl Into<String>,
    ) -> Self {
        Error::Config {
            key: key.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
