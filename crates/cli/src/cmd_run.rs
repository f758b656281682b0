//! `irqlab run`: real measurements on KVM. OWNED BY THE KVM HELPER — it replaces this file with the
//! real command wired to the `kvm` crate (this placeholder only reserves the subcommand).
use clap::Args;

use crate::{CliError, Outcome};

#[derive(Args)]
pub struct RunArgs {
    /// Benchmark: timer, ipi or device.
    pub bench: String,
}

pub fn run(_a: RunArgs) -> Result<Outcome, CliError> {
    Err(CliError("`irqlab run` is being wired to the kvm crate; not available in this build yet".into()))
}
