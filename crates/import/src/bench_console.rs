//! `irqlab import bench-console`: the arm64 benchmark guest's console lines (`@irqlab v1 …`, from
//! the Xen lab's log or a real board's serial log) through [`crate::bench_console::parse`], with
//! the host the user names (`--board`) and the Xen configuration given as `--param KEY=VALUE`
//! (xen_version, scheduler, vwfi, pinning, debug_build; any other key is kept as a parameter).
//! A log with lost or damaged lines is refused with the line unless `--param keep_partial=true`,
//! which keeps the samples before the damage and states the loss in the result.
use std::collections::BTreeMap;

use super::{ImportError, ImportOptions, Origin, Parsed};
use armguest::console::{parse as parse_console, ConsoleHost, ConsoleMeta};
use results::ResultKind;

/// The host a log came from: `qemu-tcg` / `qemu-icount` for the lab, anything else a board name.
fn host(board: &str) -> ConsoleHost {
    match board {
        "qemu-tcg" => ConsoleHost::QemuTcg,
        "qemu-icount" => ConsoleHost::InstructionCount,
        name => ConsoleHost::Board(name.to_string()),
    }
}

pub(super) fn parse(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let board = opts.board.as_deref().ok_or_else(|| {
        ImportError::other(file, "bench-console needs --board NAME (the board the log came from; qemu-tcg or qemu-icount for the lab): a result must name its host")
    })?;
    let mut meta = ConsoleMeta { host: host(board), tool_version: "irqlab armguest".into(), ..Default::default() };
    let mut extra = BTreeMap::new();
    for (k, v) in &opts.params {
        match k.as_str() {
            "xen_version" => meta.xen_version = Some(v.clone()),
            "scheduler" => meta.scheduler = Some(v.clone()),
            "vwfi" => meta.vwfi = Some(v.clone()),
            "pinning" => meta.pinning = Some(v.clone()),
            "debug_build" | "keep_partial" => {
                let b = match v.as_str() {
                    "true" | "y" | "yes" => true,
                    "false" | "n" | "no" => false,
                    _ => return Err(ImportError::key(file, &format!("--param {k}"), "true or false", v.clone())),
                };
                if k == "debug_build" {
                    meta.debug_build = Some(b);
                } else {
                    meta.keep_partial = b;
                }
            }
            _ => {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    meta.extra = extra;
    let run = parse_console(text, file, meta).map_err(|e| ImportError::other(file, e.to_string()))?;
    let mut host_facts = run.meta.platform.clone();
    host_facts.retain(|k, _| k != "source");
    Ok(Parsed {
        origin: Origin { tool: "irqlab armguest (bench-console)".into(), version: None, command: None, host: host_facts },
        configs: run.configs,
        kind: ResultKind::Measured,
    })
}
