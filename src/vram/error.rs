//! [`InputError`]: an input the calculator cannot use (a model shape, a workload setting or an
//! imported `config.json`), naming the field.

/// An input the estimator cannot use, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {}", .problem.here())]
pub struct InputError {
    /// The field.
    pub field: &'static str,
    /// What is wrong and what would be valid.
    pub problem: crate::i18n::Message,
}

/// An [`InputError`] for `field`.
pub(super) fn bad(field: &'static str, problem: impl Into<crate::i18n::Message>) -> InputError {
    InputError { field, problem: problem.into() }
}
