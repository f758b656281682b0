//! Mode routing, once: a [`Request`] (the shell's parse of a command line) goes to its mode, and
//! the checks each mode makes before anything is fetched or booted are one function, [`check`],
//! used both by a mode's own run and by the A/B for each of its sides (which used to repeat the
//! routing with its own copy of every mode's checks; issue 44). `main.rs` calls [`main`].
use crate::cli::{self, ParseError, Request};
use crate::error::LabError;
use crate::{ab, dom0, its_script, kvm, xen};

/// What a mode refuses before anything is fetched or booted (exit 2, naming the flag or file):
/// the mode's own refusals and, for a Xen of the user's, that its tree, patches and settings or
/// its binary can be used.
pub fn check(r: &Request) -> Result<(), LabError> {
    match r {
        Request::Xen(x, b) => {
            xen::check(x, b)?;
            xen::check_inputs(x)
        }
        Request::XenFio(x, _) => {
            dom0::check(x)?;
            xen::check_inputs(x)
        }
        Request::Kvm(k) => kvm::check(k).map(drop),
        Request::Guest(g, _) => xen::check_guest(g),
        Request::ItsConvert(_) | Request::Ab(_) => Ok(()),
    }
}

/// A whole command line (program name first) parsed and [`check`]ed: the A/B's check of a side.
pub fn check_argv(argv: &[String]) -> Result<(), String> {
    let (r, _) = cli::parse(argv).map_err(|e| e.to_string().trim().to_string())?;
    if matches!(r, Request::Ab(_)) {
        return Err("not a kvm or xen side".into());
    }
    check(&r).map_err(|e| e.to_string())
}

/// Runs a request; `command` is the command line, recorded in what it writes.
pub fn run(r: Request, command: Vec<String>) -> Result<i32, LabError> {
    match r {
        Request::Xen(x, b) => xen::run(&x, &b, command),
        Request::XenFio(x, f) => dom0::run(&x, &f, command),
        Request::Guest(g, b) => xen::write_guest(&g, &b),
        Request::Kvm(k) => kvm::run(&k, command),
        Request::ItsConvert(a) => its_script::convert_command(&a),
        Request::Ab(a) => Ok(ab::run(&a, &check_argv, command)?),
    }
}

/// `irqlab-lab ARGS…`: parse, run, say what went wrong; returns the exit status.
pub fn main(argv: Vec<String>) -> i32 {
    let (req, note) = match cli::parse(&argv) {
        Ok(x) => x,
        Err(ParseError::Flags(e)) => {
            let _ = e.print();
            return ParseError::Flags(e).exit_code();
        }
        Err(e) => {
            eprintln!("{}", e.to_string().trim_end());
            return e.exit_code();
        }
    };
    if let Some(n) = note {
        eprintln!("irqlab-lab: note: {n}");
    }
    let who = if matches!(req, Request::Ab(_)) { "irqlab-lab ab" } else { "irqlab-lab" };
    match run(req, argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{who}: {e}");
            e.exit_code()
        }
    }
}
