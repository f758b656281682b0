//! Provenance: the command line, start time, tool version and commit, and host of a run.
//!
//! Kept in its own block of the result so that "same scenario + seed → byte-identical result"
//! can be stated exactly: everything but `provenance` is a function of the scenario, the seed and
//! the overrides (which are also recorded in each configuration's `params`).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// The command line, argument by argument.
    pub command: Vec<String>,
    /// Start time, UTC, RFC 3339 (`SOURCE_DATE_EPOCH` pins it for reproducible output).
    pub started: String,
    /// `irqlab <version>`.
    pub tool_version: String,
    /// Git commit the binary was built from (`-dirty` when the tree had changes), or `unknown`.
    pub git_commit: String,
    /// Host name of the machine that ran it.
    pub hostname: String,
    /// Anything else worth knowing about how the run was made (overrides, selected
    /// configurations, shard, CPUs actually used...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, String>,
}
