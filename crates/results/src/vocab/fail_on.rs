//! The regression gate's question, `--fail-on slower[:STAT]`: one word of the vocabulary every
//! crate shares (issue 44 item 2), parsed here once for `irqlab compare` (crates/cli) and
//! `irqlab-lab ab` (crates/lab), which took it as two copies before. What the gate does with it
//! is `crate::stats::gate`.
use crate::stats::verdict::VERDICT_STATS;

/// `--fail-on slower[:STAT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailOn {
    /// The one statistic gated; `None` for any statistic that can be checked; `share>T` (T in
    /// ns) for the share of samples beyond T.
    pub stat: Option<String>,
}

/// Why a `--fail-on` value was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FailOnError {
    #[error("expected `slower` or `slower:STAT`, got `{0}`")]
    Word(String),
    #[error("unknown statistic `{stat}`; expected one of {}, or share>LATENCY (e.g. share>50us)", VERDICT_STATS.join(", "))]
    Stat { stat: String },
    #[error(transparent)]
    Threshold(#[from] crate::stats::StatsError),
}

impl std::str::FromStr for FailOn {
    type Err = FailOnError;

    fn from_str(s: &str) -> Result<FailOn, FailOnError> {
        let (word, stat) = match s.split_once(':') {
            Some((w, st)) => (w, Some(st.to_string())),
            None => (s, None),
        };
        if word != "slower" {
            return Err(FailOnError::Word(s.to_string()));
        }
        if let Some(t) = stat.as_deref().and_then(|st| st.strip_prefix("share>")) {
            return Ok(FailOn { stat: Some(format!("share>{}", crate::stats::exceedance::parse_threshold(t)?)) });
        }
        if let Some(st) = stat.as_deref().filter(|st| !VERDICT_STATS.contains(st)) {
            return Err(FailOnError::Stat { stat: st.to_string() });
        }
        Ok(FailOn { stat })
    }
}

impl std::fmt::Display for FailOn {
    /// As given on the command line: `slower` or `slower:p99`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.stat {
            Some(s) => write!(f, "slower:{s}"),
            None => f.write_str("slower"),
        }
    }
}

/// Where the gate also goes, for CI (issue 46): the same flags on `irqlab compare` and
/// `irqlab-lab ab` (flattened into each command's flags; they need `--fail-on`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct GateOutputs {
    /// Write the gate as JUnit XML to FILE: one test case per check.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE", requires = "fail_on"))]
    pub junit: Option<std::path::PathBuf>,
    /// Append the gate as a Markdown summary to FILE (e.g. "$GITHUB_STEP_SUMMARY").
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE", requires = "fail_on"))]
    pub summary_md: Option<std::path::PathBuf>,
    /// Replace a --junit FILE that irqlab did not write.
    #[cfg_attr(feature = "clap", arg(long, requires = "junit"))]
    pub force: bool,
}

/// For clap's `value_parser`: the message is the error's.
pub fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    s.parse().map_err(|e: FailOnError| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slower_and_slower_stat_parse_and_print_back() {
        assert_eq!(parse_fail_on("slower").unwrap(), FailOn { stat: None });
        assert_eq!(parse_fail_on("slower:p99.9").unwrap().stat.as_deref(), Some("p99.9"));
        for s in ["slower", "slower:warm_max"] {
            assert_eq!(parse_fail_on(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn other_words_and_statistics_are_refused_naming_the_choices() {
        assert_eq!(parse_fail_on("faster").unwrap_err(), "expected `slower` or `slower:STAT`, got `faster`");
        let e = parse_fail_on("slower:p42").unwrap_err();
        assert!(e.contains("`p42`") && e.contains("p99.99") && e.contains("warm_max"), "{e}");
    }
}
