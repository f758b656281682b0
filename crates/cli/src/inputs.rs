//! Reading result files for the commands that pair or label configurations by name (`compare`,
//! `report`): the bounded reader of the results crate ([`results::read_json`]: a regular file of
//! at most [`results::MAX_RESULT_BYTES`]), plus a check that no two configurations share a name.
//! Two rows named `idle=trap` (a sweep with a repeated value, or an edited file) would be paired
//! or plotted as one, silently; such a result is refused, naming the file and the name.
use std::collections::BTreeSet;
use std::path::Path;

use results::RunResult;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Read(#[from] results::ResultsError),
    #[error("{file}: configuration name `{name}` appears {count} times; rows with one name cannot be told apart (re-run the sweep without repeated values)")]
    DuplicateName { file: String, name: String, count: usize },
}

/// The first configuration name that appears more than once, with its count.
pub fn duplicate_name(r: &RunResult) -> Option<(String, usize)> {
    let mut seen = BTreeSet::new();
    let dup = r.configs.iter().find(|c| !seen.insert(c.name.as_str()))?;
    Some((dup.name.clone(), r.configs.iter().filter(|c| c.name == dup.name).count()))
}

/// Read a result whose configurations have distinct names.
pub fn read_named(path: &Path) -> Result<RunResult, InputError> {
    let r = results::read_json(path)?;
    match duplicate_name(&r) {
        Some((name, count)) => Err(InputError::DuplicateName { file: path.display().to_string(), name, count }),
        None => Ok(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_name_is_found_with_its_count() {
        let mut r = RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Predicted));
        for n in ["a", "idle=trap", "b", "idle=trap", "idle=trap"] {
            r.configs.push(results::ConfigResult::new(n));
        }
        assert_eq!(duplicate_name(&r), Some(("idle=trap".into(), 3)));
        r.configs.truncate(3);
        assert_eq!(duplicate_name(&r), None);
    }
}
