//! [`InputError`]: an input the calculator cannot use (a model shape, a workload setting or an
//! imported `config.json`), naming the field.

/// An input the estimator cannot use, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct InputError {
    /// The field.
    pub field: &'static str,
    /// What is wrong and what would be valid.
    pub problem: crate::i18n::Message,
}

/// `field: problem`, in the language shown now.
impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem.en())
    }
}

/// An [`InputError`] for `field`.
pub(super) fn bad(field: &'static str, problem: impl Into<crate::i18n::Message>) -> InputError {
    InputError { field, problem: problem.into() }
}
