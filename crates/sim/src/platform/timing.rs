//! The per-core timing model (issue 43, item 1): what a counted path costs on one board.
//!
//! The lab's path census (issue 42, [`crate::census`]) says what the code executed on an
//! interrupt's path — instructions by exception level and by function, GIC accesses by register
//! class and kind, exceptions taken and returned from. It cannot say how long that takes on a
//! board it does not emulate; this model does, from the board's own numbers:
//!
//! ```text
//! time = Σ_kind instructions(kind) × CPI(kind) / f          kind: hyp_entry | hyp_c | guest
//!      + Σ_class accesses(class) × latency(class)           class: gicd_read, ich_write, … (GIC_CLASSES)
//!      + Σ_el exceptions(el) × entry(el) + erets(el) × return(el)
//!      + cold: instructions × cold_cpi_extra / f            (the path's first run after other work)
//! ```
//!
//! Kinds of code follow what a core does differently with them: the hypervisor's entry code
//! (vector, register save and restore: straight-line stores and loads, system-register moves that
//! serialise on in-order cores), its C paths (branches, locks, pointer chasing), and the guest's
//! handler. A GIC access costs what its register class costs on the board's interconnect: a system
//! register (GICv3 ICC/ICH) stays in the core, an MMIO access (GICv2 GICC/GICH/GICD, GICv3
//! GICD/GICR/ITS) goes over the interconnect to the GIC (GIC-400 vs GIC-600). The board is the
//! profile: its `[timing]` section holds every parameter with `source` and `basis`, and the
//! source must say what it is — a core TRM or optimisation guide, a cited microbenchmark, this
//! host's measurement, `fitted on <fit set>` (basis `calibrated`) or `guess` (basis `guess`).
//! A parameter that does not say so is refused, naming the file and the key.
use std::collections::BTreeMap;

use serde::Deserialize;

use super::cost_spec::{Basis, ParamSpec};

/// Kinds of code with their own CPI (`timing.cpi.<kind>`).
pub const CODE_KINDS: [&str; 3] = ["hyp_entry", "hyp_c", "guest"];

/// GIC register classes a census counts and a profile prices (`timing.gic_ns.<class>_<read|write>`),
/// and whether the class is a system register (true) or MMIO (false). GICv2 (GIC-400):
/// distributor `gicd`, CPU interface `gicc`, virtual interface control `gich`, virtual CPU
/// interface `gicv`; GICv3+: distributor `gicd`, redistributor `gicr`, `its`, and the CPU
/// interface as system registers `icc` (ICC_*_EL1) and `ich` (ICH_*_EL2).
pub const GIC_CLASSES: [(&str, bool); 8] = [("gicd", false), ("gicc", false), ("gich", false), ("gicv", false), ("gicr", false), ("its", false), ("icc", true), ("ich", true)];

/// Exception levels a census counts exceptions and instructions at.
pub const LEVELS: [&str; 3] = ["el2", "el1", "el0"];

/// The `[timing]` section as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingSpec {
    /// Cycles per instruction by kind of code (all of [`CODE_KINDS`]).
    #[serde(default)]
    pub cpi: BTreeMap<String, ParamSpec>,
    /// ns per access, by `<class>_<read|write>` ([`GIC_CLASSES`]); only the classes this board has.
    #[serde(default)]
    pub gic_ns: BTreeMap<String, ParamSpec>,
    /// Cycles to take an exception to a level (`entry_el2`, `entry_el1`) and to return from it
    /// (`return_el2`, `return_el1`).
    #[serde(default)]
    pub exception_cycles: BTreeMap<String, ParamSpec>,
    /// Extra cycles per instruction on a path's first run after other work (`cpi_extra`).
    #[serde(default)]
    pub cold: BTreeMap<String, ParamSpec>,
}

/// One resolved parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingParam {
    pub value: f64,
    pub source: String,
    pub basis: Basis,
}

/// A board's timing model, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreTiming {
    pub cpu_ghz: f64,
    pub cpi: BTreeMap<String, TimingParam>,
    pub gic_ns: BTreeMap<String, TimingParam>,
    pub exception_cycles: BTreeMap<String, TimingParam>,
    pub cold_cpi_extra: TimingParam,
}

/// Why a `[timing]` section is refused; the caller adds the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TimingError {
    #[error("key `{key}`: {message}")]
    Invalid { key: String, message: String },
}

fn invalid(key: String, message: impl Into<String>) -> TimingError {
    TimingError::Invalid { key, message: message.into() }
}

/// The source must say what kind of number this is: `fitted on <fit set>` for a calibrated one,
/// `guess` for a guess, and something (a document, a measurement) otherwise.
fn check_source(key: &str, p: &ParamSpec) -> Result<(), TimingError> {
    let s = p.source.trim();
    if s.is_empty() {
        return Err(invalid(
            key.into(),
            "a `source` naming where the number comes from (a TRM or optimisation guide, a cited microbenchmark, a measurement of this host, `fitted on <fit set>`, or `guess`)",
        ));
    }
    if p.basis == Basis::Calibrated && !s.contains("fitted on ") {
        return Err(invalid(key.into(), "basis \"calibrated\" needs a source saying `fitted on <fit set>` (the references it was fitted to)"));
    }
    if p.basis == Basis::Guess && !s.to_ascii_lowercase().starts_with("guess") {
        return Err(invalid(key.into(), "basis \"guess\" needs a source that starts with `guess` (a guess says it is one)"));
    }
    if !p.value.is_finite() || p.value < 0.0 {
        return Err(invalid(key.into(), format!("a finite, non-negative value, got {}", p.value)));
    }
    Ok(())
}

fn resolve(prefix: &str, specs: &BTreeMap<String, ParamSpec>, allowed: &[String], required: &[String]) -> Result<BTreeMap<String, TimingParam>, TimingError> {
    let mut out = BTreeMap::new();
    for (k, p) in specs {
        let key = format!("{prefix}.{k}");
        if !allowed.iter().any(|a| a == k) {
            return Err(invalid(key, format!("unknown key; expected one of {}", allowed.join(", "))));
        }
        check_source(&key, p)?;
        out.insert(k.clone(), TimingParam { value: p.value, source: p.source.clone(), basis: p.basis });
    }
    for r in required {
        if !out.contains_key(r) {
            return Err(invalid(format!("{prefix}.{r}"), "missing (every board prices this)"));
        }
    }
    Ok(out)
}

/// Every `<class>_<kind>` name.
pub fn gic_keys() -> Vec<String> {
    GIC_CLASSES.iter().flat_map(|(c, _)| [format!("{c}_read"), format!("{c}_write")]).collect()
}

impl CoreTiming {
    /// Validate a `[timing]` section at `prefix` (`timing` in a profile) for a core at `cpu_ghz`.
    pub fn resolve(spec: &TimingSpec, prefix: &str, cpu_ghz: f64) -> Result<CoreTiming, TimingError> {
        let kinds: Vec<String> = CODE_KINDS.iter().map(|s| s.to_string()).collect();
        let cpi = resolve(&format!("{prefix}.cpi"), &spec.cpi, &kinds, &kinds)?;
        for (k, p) in &cpi {
            if p.value <= 0.0 {
                return Err(invalid(format!("{prefix}.cpi.{k}"), "a positive number of cycles per instruction"));
            }
        }
        let gic_ns = resolve(&format!("{prefix}.gic_ns"), &spec.gic_ns, &gic_keys(), &[])?;
        let exc: Vec<String> = ["entry_el2", "return_el2", "entry_el1", "return_el1"].iter().map(|s| s.to_string()).collect();
        let exception_cycles = resolve(&format!("{prefix}.exception_cycles"), &spec.exception_cycles, &exc, &exc)?;
        let cold_keys = vec!["cpi_extra".to_string()];
        let mut cold = resolve(&format!("{prefix}.cold"), &spec.cold, &cold_keys, &cold_keys)?;
        let cold_cpi_extra = cold.remove("cpi_extra").ok_or_else(|| invalid(format!("{prefix}.cold.cpi_extra"), "missing"))?;
        Ok(CoreTiming { cpu_ghz, cpi, gic_ns, exception_cycles, cold_cpi_extra })
    }

    fn cycles_ns(&self, cycles: f64) -> f64 {
        cycles / self.cpu_ghz
    }

    /// The time of a counted path, warm or on its first run after other work (`cold`).
    /// A GIC class the board does not price is an error naming `timing.gic_ns.<key>`.
    pub fn time(&self, c: &PathCounts, cold: bool) -> Result<PathTime, TimingError> {
        let mut t = PathTime::default();
        for (kind, n) in [("hyp_entry", c.hyp_entry), ("hyp_c", c.hyp_c), ("guest", c.guest)] {
            let cpi = self.cpi.get(kind).map_or(0.0, |p| p.value);
            t.instructions_ns += self.cycles_ns(n * cpi);
        }
        for (key, n) in &c.gic {
            let lat = self.gic_ns.get(key).ok_or_else(|| {
                invalid(
                    format!("timing.gic_ns.{key}"),
                    "the census counts this GIC register class; the board's profile does not price it (is the census from a board with another GIC?)",
                )
            })?;
            t.gic_ns += n * lat.value;
        }
        for (el, (entries, erets)) in &c.exceptions {
            let e = self.exception_cycles.get(&format!("entry_{el}")).map_or(0.0, |p| p.value);
            let r = self.exception_cycles.get(&format!("return_{el}")).map_or(0.0, |p| p.value);
            t.exceptions_ns += self.cycles_ns(entries * e + erets * r);
        }
        if cold {
            t.cold_ns = self.cycles_ns((c.hyp_entry + c.hyp_c + c.guest) * self.cold_cpi_extra.value);
        }
        Ok(t)
    }

    /// Every parameter with its basis and source, for result metadata (`timing.<group>.<key>`).
    pub fn describe(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        let mut put = |group: &str, k: &str, p: &TimingParam| {
            m.insert(format!("timing.{group}.{k}"), format!("{} [{}: {}]", p.value, p.basis.as_str(), p.source));
        };
        for (k, p) in &self.cpi {
            put("cpi", k, p);
        }
        for (k, p) in &self.gic_ns {
            put("gic_ns", k, p);
        }
        for (k, p) in &self.exception_cycles {
            put("exception_cycles", k, p);
        }
        put("cold", "cpi_extra", &self.cold_cpi_extra);
        m
    }
}

/// What the timing model needs of a path: instructions by kind of code, GIC accesses by
/// `<class>_<kind>`, and per exception level (entries, erets). Per interrupt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathCounts {
    pub hyp_entry: f64,
    pub hyp_c: f64,
    pub guest: f64,
    pub gic: BTreeMap<String, f64>,
    pub exceptions: BTreeMap<String, (f64, f64)>,
}

/// A path's time by term (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathTime {
    pub instructions_ns: f64,
    pub gic_ns: f64,
    pub exceptions_ns: f64,
    pub cold_ns: f64,
}

impl PathTime {
    pub fn total_ns(&self) -> f64 {
        self.instructions_ns + self.gic_ns + self.exceptions_ns + self.cold_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SECTION: &str = r#"
[cpi.hyp_entry]
value = 1.0
source = "guess: straight-line stores"
basis = "guess"
[cpi.hyp_c]
value = 2.0
source = "guess: branchy C"
basis = "guess"
[cpi.guest]
value = 1.5
source = "guess"
basis = "guess"
[gic_ns.gicc_read]
value = 100
source = "kvm-unit-tests eoi on Juno (docs/sources.md E)"
basis = "published"
[exception_cycles.entry_el2]
value = 50
source = "guess"
basis = "guess"
[exception_cycles.return_el2]
value = 40
source = "guess"
basis = "guess"
[exception_cycles.entry_el1]
value = 30
source = "guess"
basis = "guess"
[exception_cycles.return_el1]
value = 20
source = "guess"
basis = "guess"
[cold.cpi_extra]
value = 0.5
source = "fitted on xen-arm-zynq-timer (S3's fit references)"
basis = "calibrated"
"#;

    fn timing(text: &str) -> Result<CoreTiming, TimingError> {
        let spec: TimingSpec = toml::from_str(text).unwrap();
        CoreTiming::resolve(&spec, "timing", 2.0)
    }

    #[test]
    fn times_each_term_from_its_counts() {
        let t = timing(SECTION).unwrap();
        let mut c = PathCounts { hyp_entry: 100.0, hyp_c: 200.0, guest: 10.0, ..Default::default() };
        c.gic.insert("gicc_read".into(), 2.0);
        c.exceptions.insert("el2".into(), (1.0, 1.0));
        let w = t.time(&c, false).unwrap();
        // (100×1 + 200×2 + 10×1.5) cycles at 2 GHz; 2 × 100 ns; (50 + 40) cycles.
        assert_eq!(w.instructions_ns, 257.5);
        assert_eq!(w.gic_ns, 200.0);
        assert_eq!(w.exceptions_ns, 45.0);
        assert_eq!(w.cold_ns, 0.0);
        let cold = t.time(&c, true).unwrap();
        assert_eq!(cold.cold_ns, 310.0 * 0.5 / 2.0);
        assert_eq!(cold.total_ns(), w.total_ns() + 77.5);
    }

    #[test]
    fn an_unpriced_gic_class_names_its_key() {
        let t = timing(SECTION).unwrap();
        let mut c = PathCounts::default();
        c.gic.insert("ich_write".into(), 1.0);
        let e = t.time(&c, false).unwrap_err().to_string();
        assert!(e.contains("timing.gic_ns.ich_write"), "{e}");
    }

    #[test]
    fn refuses_parameters_that_do_not_say_what_they_are() {
        let e = timing(&SECTION.replacen("source = \"guess: branchy C\"", "source = \"branchy C\"", 1)).unwrap_err().to_string();
        assert!(e.contains("timing.cpi.hyp_c") && e.contains("guess"), "{e}");
        let e = timing(&SECTION.replace("fitted on xen-arm-zynq-timer (S3's fit references)", "S3")).unwrap_err().to_string();
        assert!(e.contains("timing.cold.cpi_extra") && e.contains("fitted on"), "{e}");
        let e = timing(&SECTION.replace("kvm-unit-tests eoi on Juno (docs/sources.md E)", " ")).unwrap_err().to_string();
        assert!(e.contains("timing.gic_ns.gicc_read") && e.contains("source"), "{e}");
        let e = timing(&SECTION.replace("[gic_ns.gicc_read]", "[gic_ns.gicc_peek]")).unwrap_err().to_string();
        assert!(e.contains("timing.gic_ns.gicc_peek") && e.contains("unknown key"), "{e}");
        let e = timing(&SECTION.replace("[cpi.guest]\nvalue = 1.5", "[cpi.guest]\nvalue = 0")).unwrap_err().to_string();
        assert!(e.contains("timing.cpi.guest") && e.contains("positive"), "{e}");
        let mut no_entry = SECTION.replace("[exception_cycles.entry_el1]\nvalue = 30\nsource = \"guess\"\nbasis = \"guess\"\n", "");
        no_entry.push('\n');
        let e = timing(&no_entry).unwrap_err().to_string();
        assert!(e.contains("timing.exception_cycles.entry_el1") && e.contains("missing"), "{e}");
    }
}
