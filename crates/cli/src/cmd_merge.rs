//! `irqlab merge OUT.json PART.json...`: put the shards of a sweep (`irqlab sim --shard I/N`)
//! back together into the result the unsharded run would have written. The merge is
//! `sim::shard::merge` (over `results::shard`); here are the flags, the output and the message.
//!
//! Point k of a scenario belongs to shard (k mod N) + 1; each shard records the indices of its
//! points, so the original order is rebuilt exactly; seeds never depend on the sharding.
//! Parts must come from the same scenario, seed, tool version and commit, and the same prepared
//! scenario (the fingerprint each shard stores, see [`sim::shard::fingerprint`]: point list, seeds,
//! overrides, references, document); all N shards must be present exactly once. The output
//! directory may not be one of the parts' own. References are checked again on the merged result (a ratio's
//! two configurations may sit in different shards). Everything but `provenance` is then
//! byte-identical to the unsharded result.
use std::path::PathBuf;

use clap::Args;

use crate::{CliError, Outcome};

#[derive(Args)]
pub struct MergeArgs {
    /// Where to write the merged result (result.json; result.csv is written next to it).
    pub out: PathBuf,
    /// The shards' result.json files, in any order.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
}

pub fn run(a: MergeArgs) -> Result<Outcome, CliError> {
    let dir = a.out.parent().filter(|d| !d.as_os_str().is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    if a.out.file_name().is_none_or(|f| f != "result.json") {
        return Err(CliError(format!("{}: the merged result is written as result.json (and result.csv) in a directory; give DIR/result.json", a.out.display())));
    }
    // The parts are inputs: merging into a shard's own directory would replace it.
    crate::output::check_output_dir(&dir, &a.parts)?;
    let mut merged = sim::shard::merge(&a.parts)?;
    let shown: Vec<String> = a.parts.iter().map(|p| p.display().to_string()).collect();
    let details = results::shard::merged_details(&shown, &merged);
    merged.provenance = Some(crate::provenance::current(details));
    let json = crate::output::write_files(&dir, &merged, &a.parts)?;
    crate::term::note(&format!("merged {} shards, {} configurations: wrote {} and result.csv\n", a.parts.len(), merged.configs.len(), json.display()));
    Ok(Outcome::Ok)
}
