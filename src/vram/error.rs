//! [`InputError`]: an input the calculator cannot use (a model shape, a workload setting or an
//! imported `config.json`), naming the field.

/// An input the estimator cannot use, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct InputError {
    /// The field.
    pub field: &'static str,
    /// What is wrong and what would be valid.
    pub problem: String,
}

/// An [`InputError`] for `field`.
pub(super) fn bad(field: &'static str, problem: impl Into<String>) -> InputError {
    InputError { field, problem: problem.into() }
}
