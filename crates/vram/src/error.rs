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

/// `field: problem`.
impl crate::i18n::ToMessage for InputError {
    fn to_message(&self) -> crate::i18n::Message {
        crate::i18n::Message::join(
            [crate::i18n::Message::data(self.field), self.problem.clone()],
            &crate::i18n::Message::data(": "),
        )
    }
}

/// `field: problem` in English (logs); a front end shows [`crate::i18n::ToMessage::to_message`].
impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::i18n::ToMessage::to_message(self).en())
    }
}

/// An [`InputError`] for `field`.
pub(super) fn bad(field: &'static str, problem: impl Into<crate::i18n::Message>) -> InputError {
    InputError { field, problem: problem.into() }
}
