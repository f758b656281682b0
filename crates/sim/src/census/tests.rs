//! The census loader's checks, on the test-only fixture (`tests/data/census-fixture.json`,
//! invented counts of the census's shape: not a lab run).
use super::*;
use crate::platform::timing::{CoreTiming, TimingSpec};
use results::vocab::Gic;

const FIXTURE: &str = include_str!("../../tests/data/census-fixture.json");

const XEN_ENTRY: &[&str] = &["guest_irq", "return_from_trap"];

fn spec(class: &'static str, gic: Gic, enters_el2: bool) -> PathSpec {
    PathSpec { class, gic, enters_el2, entry_symbols: XEN_ENTRY }
}

fn timing() -> CoreTiming {
    let mut text = String::new();
    for (k, v) in [
        ("cpi.hyp_entry", 1.0),
        ("cpi.hyp_c", 2.0),
        ("cpi.guest", 1.0),
        ("exception_cycles.entry_el2", 60.0),
        ("exception_cycles.return_el2", 40.0),
        ("exception_cycles.entry_el1", 30.0),
        ("exception_cycles.return_el1", 20.0),
        ("cold.cpi_extra", 1.0),
    ] {
        text.push_str(&format!("[{k}]\nvalue = {v}\nsource = \"guess\"\nbasis = \"guess\"\n"));
    }
    for k in ["gicc_read", "gicc_write", "gich_write"] {
        text.push_str(&format!("[gic_ns.{k}]\nvalue = 100\nsource = \"docs/sources.md E: A53 + GIC-400 eoi 103 ns\"\nbasis = \"published\"\n"));
    }
    CoreTiming::resolve(&toml::from_str::<TimingSpec>(&text).unwrap(), "timing", 1.0).unwrap()
}

fn err(text: &str) -> String {
    Census::parse(text, "c.json").unwrap_err().to_string()
}

#[test]
fn the_fixture_loads_and_times_its_path() {
    let c = Census::parse(FIXTURE, "fixture.json").unwrap();
    let seg = Segment::new(&c, &spec("xen-vtimer-running", Gic::V2, true), &timing()).unwrap();
    // 200 entry instructions at CPI 1, 600 of C at CPI 2, 12 guest at 1: 1412 cycles at 1 GHz;
    // 4 GIC MMIO accesses at 100 ns; one EL2 entry (60) + eret (40), one EL1 entry (30).
    assert_eq!(seg.warm.instructions_ns, 1412.0);
    assert_eq!(seg.warm.gic_ns, 400.0);
    assert_eq!(seg.warm.exceptions_ns, 130.0);
    assert_eq!(seg.cold.cold_ns, 812.0);
    assert_eq!(seg.spread.median_ns, 1942.0);
    // min 790 / max 830 at EL2: all of the difference is C code (the entry functions are fixed).
    assert_eq!((seg.spread.min_ns, seg.spread.max_ns), (1922.0, 2002.0));
    assert!(seg.spread.holds(1950.0) && !seg.spread.holds(1900.0) && !seg.spread.holds(2010.0));
    assert!(seg.note.is_none());
    assert!(seg.provenance.contains("fixture.json#xen-vtimer-running") && seg.provenance.contains("commit 0000000"), "{}", seg.provenance);
}

#[test]
fn without_functions_entry_code_is_timed_as_c_and_said_so() {
    let c = Census::parse(FIXTURE, "fixture.json").unwrap();
    let mut t = timing();
    t.gic_ns.insert("ich_write".into(), t.gic_ns["gicc_read"].clone());
    t.gic_ns.insert("icc_read".into(), t.gic_ns["gicc_read"].clone());
    let seg = Segment::new(&c, &PathSpec { class: "kvm-sgi-dispatch", gic: Gic::V3, enters_el2: true, entry_symbols: &[] }, &t).unwrap();
    assert_eq!(seg.warm.instructions_ns, 400.0 * 2.0 + 2000.0);
    assert!(seg.note.as_deref().is_some_and(|n| n.contains("timed as C")), "{:?}", seg.note);
}

#[test]
fn a_census_of_another_path_is_refused_naming_file_and_key() {
    let c = Census::parse(FIXTURE, "fixture.json").unwrap();
    let t = timing();
    let e = Segment::new(&c, &spec("xen-sgi-target", Gic::V2, true), &t).unwrap_err().to_string();
    assert!(e.starts_with("fixture.json: key `paths.xen-sgi-target`") && e.contains("xen-vtimer-running"), "{e}");
    let e = Segment::new(&c, &spec("xen-vtimer-running", Gic::V3, true), &t).unwrap_err().to_string();
    assert!(e.contains("paths.xen-vtimer-running.gic.gicc_read") && e.contains("GICv3"), "{e}");
    let e = Segment::new(&c, &spec("kvm-sgi-dispatch", Gic::V2, true), &t).unwrap_err().to_string();
    assert!(e.contains("paths.kvm-sgi-dispatch.gic.icc_read"), "{e}");
    let e = Segment::new(&c, &spec("xen-vtimer-running", Gic::V2, false), &t).unwrap_err().to_string();
    assert!(e.contains("paths.xen-vtimer-running.instructions.el2"), "{e}");
    let no_trap = FIXTURE.replace("\"exceptions\": { \"el2\": { \"irq\": 1 }, \"el1\": { \"irq\": 1 } }", "\"exceptions\": { \"el1\": { \"irq\": 1 } }");
    let c = Census::parse(&no_trap, "fixture.json").unwrap();
    let e = Segment::new(&c, &spec("xen-vtimer-running", Gic::V2, true), &t).unwrap_err().to_string();
    assert!(e.contains("paths.xen-vtimer-running.exceptions.el2"), "{e}");
}

#[test]
fn bad_files_are_refused_naming_the_key() {
    assert!(err("{").starts_with("c.json:"));
    assert!(err(&FIXTURE.replace("irqlab-census/1", "irqlab-census/9")).contains("key `format`"));
    assert!(err(&FIXTURE.replace("\"commit\": \"0000000\"", "\"commit\": \" \"")).contains("key `run.commit`"));
    assert!(err(&FIXTURE.replace("\"commit\": \"0000000\",", "")).contains("commit"));
    let e = err(&FIXTURE.replace("\"gicc_write\": 2", "\"gicc_poke\": 2"));
    assert!(e.contains("paths.xen-vtimer-running.gic.gicc_poke") && e.contains("unknown GIC register class"), "{e}");
    let e = err(&FIXTURE.replace("\"median\": 800, \"min\": 790", "\"median\": 780, \"min\": 790"));
    assert!(e.contains("paths.xen-vtimer-running.instructions.el2") && e.contains("min <= median"), "{e}");
    let e = err(&FIXTURE.replace("\"vgic_inject_irq\": 300", "\"vgic_inject_irq\": 3000"));
    assert!(e.contains("paths.xen-vtimer-running.functions.el2"), "{e}");
    let e = err(&FIXTURE.replace("\"erets\": { \"el2\": 1 }\n    },\n    \"kvm", "\"erets\": { \"el3\": 1 }\n    },\n    \"kvm"));
    assert!(e.contains("paths.xen-vtimer-running.erets.el3") && e.contains("exception level"), "{e}");
    let e =
        err(&FIXTURE
            .replace("\"interrupts\": 20,\n      \"instructions\": { \"el2\": { \"median\": 800", "\"interrupts\": 0,\n      \"instructions\": { \"el2\": { \"median\": 800"));
    assert!(e.contains("paths.xen-vtimer-running.interrupts"), "{e}");
    let e = err(&FIXTURE.replace("\"gich_write\": 1", "\"gich_write\": -1"));
    assert!(e.contains("paths.xen-vtimer-running.gic.gich_write"), "{e}");
    let e = err(&FIXTURE.replace("\"interrupts\": 20,", "\"interrupts\": 20, \"colour\": 1,"));
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn load_refuses_unknown_names_and_reads_files() {
    let e = Census::load("no-such-census").unwrap_err().to_string();
    assert!(e.contains("no-such-census") && e.contains("shipped"), "{e}");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/census-fixture.json");
    let c = Census::load(path).unwrap();
    assert_eq!(c.file, path);
    assert_eq!(c.paths.len(), 2);
    for (name, text) in SHIPPED {
        Census::parse(text, name).unwrap_or_else(|e| panic!("shipped census {name}: {e}"));
    }
}

#[test]
fn a_model_path_outside_its_census_spread_is_reported() {
    use crate::engine::CostDist;
    use crate::models::xen_core::timer_path::check_against_census;
    let c = Census::parse(FIXTURE, "fixture.json").unwrap();
    let t = timing();
    // The fixture's vtimer path times at 1922–2002 ns on this timing (test above).
    let k = |ns: f64| CostDist::Constant { ns };
    let ok = check_against_census(&[&k(300.0), &k(1100.0), &k(100.0), &k(300.0), &k(150.0)], &c, Gic::V2, &t).unwrap();
    assert_eq!(ok.median_ns, 1942.0);
    let e = check_against_census(&[&k(300.0), &k(606.0), &k(100.0), &k(300.0), &k(40.0)], &c, Gic::V2, &t).unwrap_err();
    assert!(e.contains("1346 ns") && e.contains("fixture.json#xen-vtimer-running") && e.contains("1922"), "{e}");
    // A census of the other GIC generation is not this board's path.
    let e = check_against_census(&[&k(300.0), &k(1100.0), &k(100.0), &k(300.0), &k(150.0)], &c, Gic::V3, &t).unwrap_err();
    assert!(e.contains("GICv3"), "{e}");
}
