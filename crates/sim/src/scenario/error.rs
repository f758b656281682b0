//! Scenario errors: each names the file, the key and what was expected.

/// A scenario file or one of its points is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The file cannot be read.
    #[error("{file}: cannot read: {message}")]
    Read { file: String, message: String },
    /// The text is not TOML: the toml crate's error (with its line and column), kept.
    #[error("{file}: {source}")]
    Toml { file: String, source: toml::de::Error },
    /// A key has the wrong type or is unknown.
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    /// A key holds an impossible value.
    #[error("{file}: key `{key}`: expected {expected}, got {got}")]
    Invalid { file: String, key: String, expected: String, got: String },
    /// The platform profile file could not be read.
    #[error("{file}: [platform]: {message}")]
    Platform { file: String, message: String },
    /// The platform profile is unusable (unknown, malformed, or an override it refuses): the
    /// profile's error, kept.
    #[error("{file}: [platform]: {source}")]
    Profile { file: String, source: crate::platform::PlatformError },
    /// `scenario.model` names no known model.
    #[error("{file}: key `scenario.model`: unknown model `{model}`, expected one of: {known}")]
    UnknownModel { file: String, model: String, known: String },
    /// Some points' inputs are unusable (each distinct problem once); nothing was run.
    #[error("{}", show_problems(problems))]
    Unusable { problems: Vec<String> },
    /// No shipped scenario of that name and no such file.
    #[error("no scenario `{name}`: not a file and not a shipped scenario (see `irqlab scenarios`){hint}")]
    NotFound { name: String, hint: String },
    /// A census segment of the model cannot be timed: its census file is not the segment's path,
    /// or the board has no timing model (issue 43).
    #[error("{file}: [census]: {source}")]
    Census {
        file: String,
        #[source]
        source: crate::census::segments::SegmentError,
    },
}

impl ScenarioError {
    pub fn invalid(file: &str, key: &str, expected: impl Into<String>, got: impl std::fmt::Display) -> Self {
        ScenarioError::Invalid { file: file.into(), key: key.into(), expected: expected.into(), got: got.to_string() }
    }
}

fn show_problems(problems: &[String]) -> String {
    match problems {
        [one] => one.clone(),
        many => format!("{} problems, nothing was run:\n  {}", many.len(), many.join("\n  ")),
    }
}
