//! The census reader on the lab's own files (`crates/sim/census/lab/`), and its refusals on
//! copies of them changed one key at a time.
use serde_json::Value;

use super::segments::{self, SEGMENTS};
use super::*;
use crate::platform::timing::{gic_keys, CoreTiming, TimingSpec};

/// A timing at 1 GHz: CPI entry 1, C 2, guest 1; exceptions 60/40 (EL2) and 30/20 (EL1)
/// cycles; every GIC class 100 ns; cold 1 extra cycle per instruction.
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
    for k in gic_keys() {
        text.push_str(&format!("[gic_ns.{k}]\nvalue = 100\nsource = \"guess\"\nbasis = \"guess\"\n"));
    }
    CoreTiming::resolve(&toml::from_str::<TimingSpec>(&text).unwrap(), "timing", 1.0).unwrap()
}

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no shipped census {name}")).1
}

fn vtimer() -> &'static segments::SegmentDef {
    segments::def("xen-vtimer-running").unwrap()
}

/// A shipped file changed by `f`, parsed as `c.json`.
fn changed(name: &str, f: impl FnOnce(&mut Value)) -> Result<LabCensus, CensusError> {
    let mut v: Value = serde_json::from_str(shipped(name)).unwrap();
    f(&mut v);
    LabCensus::parse(&v.to_string(), "c.json")
}

fn err(r: Result<impl std::fmt::Debug, CensusError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn every_shipped_file_loads_and_every_segment_times_on_both_gics() {
    assert!(SHIPPED.len() >= 8, "{:?}", SHIPPED.iter().map(|s| s.0).collect::<Vec<_>>());
    for (name, text) in SHIPPED {
        LabCensus::parse(text, name).unwrap_or_else(|e| panic!("shipped census {name}: {e}"));
    }
    for d in SEGMENTS {
        for gic in [GicIf::Mmio, GicIf::Sysreg] {
            let s = segments::time(d, None, gic, &timing()).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            assert!(s.provenance.contains(&format!("crates/sim/census/lab/{}.json#{}", d.census, d.spec.class)), "{}", s.provenance);
            assert!(s.provenance.contains("irqlab commit ") && s.provenance.contains("python3 scripts/census-data.py"), "{}", s.provenance);
        }
    }
}

#[test]
fn the_vtimer_class_is_split_into_entry_code_c_and_guest_from_its_symbols() {
    let c = LabCensus::load("xen-timer-credit2-native").unwrap();
    let v = vtimer().spec.view(&c, GicIf::Mmio).unwrap();
    // entry.o#guest_irq 54 + return_from_trap 23 + check_pending_guest_serror 3, hyp_traps_vector 1,
    // abort_guest_exit_start 1 + _end 5: 87 of the 903 EL2 instructions; the guest's 1 (wait_flag).
    assert_eq!((v.hyp_entry, v.hyp_c, v.guest), (87.0, 816.0, 1.0));
    assert!(v.split_known);
    // GICv3 counted, GICv2 board: ICC_IAR1 ×2 → GICC reads, EOIR + DIR → GICC writes,
    // ICH_HCR r → GICH read, ICH_HCR w + ICH_LR0 w → GICH writes; CNTV_CTL is no GIC access.
    let want: BTreeMap<String, f64> = [("gicc_read", 2.0), ("gicc_write", 2.0), ("gich_read", 1.0), ("gich_write", 2.0)].into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    assert_eq!(v.gic, want);
    assert_eq!(v.translation, view::Translation::V3AsV2);
    assert_eq!(v.exceptions, [("el2".to_string(), (1.0, 1.0))].into());
    let s = Segment::new(&c, &vtimer().spec, GicIf::Mmio, &timing()).unwrap();
    // 87 × 1 + 816 × 2 + 1 × 1 cycles at 1 GHz; 7 accesses × 100 ns; EL2 entry 60 + return 40.
    assert_eq!((s.warm.instructions_ns, s.warm.gic_ns, s.warm.exceptions_ns, s.warm.cold_ns), (1720.0, 700.0, 100.0, 0.0));
    assert_eq!(s.cold.cold_ns, 904.0);
    assert_eq!((s.spread.min_ns, s.spread.median_ns, s.spread.max_ns), (2520.0, 2520.0, 2520.0));
    assert!(s.notes.iter().any(|n| n.contains("GICv3") && n.contains("GICv2 MMIO")), "{:?}", s.notes);
    // The same class on a GICv3 board: the registers as counted.
    let v3 = vtimer().spec.view(&c, GicIf::Sysreg).unwrap();
    assert_eq!(v3.gic.keys().cloned().collect::<Vec<_>>(), ["icc_read", "icc_write", "ich_read", "ich_write"]);
    assert_eq!(v3.translation, view::Translation::Same);
}

#[test]
fn the_sender_s_trapped_write_is_the_trap_not_a_gic_access() {
    let c = LabCensus::load("xen-ipi-credit2-native").unwrap();
    let d = segments::def("xen-sgi-send").unwrap();
    let v = d.spec.view(&c, GicIf::Mmio).unwrap();
    // ICC_SGI1R_EL1 w once per path is the guest's trapped write: only ICH_HCR r/w remain.
    assert_eq!(v.gic.keys().cloned().collect::<Vec<_>>(), ["gich_read", "gich_write"]);
    assert_eq!(v.exceptions, [("el2".to_string(), (1.0, 1.0))].into());
    assert_eq!(v.instructions(), 764.0);
    // Without the trapped write the class is not a trapped send.
    let e = err(changed("xen-ipi-credit2-native", |v| {
        let g = v["census"]["classes"]["ipi.send.from-ipi_loop"]["gic"].as_array_mut().unwrap();
        g.retain(|x| x["register"] != "ICC_SGI1R_EL1");
    })
    .and_then(|c| d.spec.view(&c, GicIf::Mmio)));
    assert!(e.contains("c.json: key `census.classes.ipi.send.from-ipi_loop.gic.ICC_SGI1R_EL1 w`"), "{e}");
}

#[test]
fn a_spread_is_timed_at_the_class_s_own_min_and_max() {
    // credit, trap: the timer class runs 3,883..4,181 instructions (median 4,174).
    let c = LabCensus::load("xen-timer-credit-trap").unwrap();
    let spec = PathSpec { params: &[("vwfi", "trap")], ..vtimer().spec.clone() };
    let s = Segment::new(&c, &spec, GicIf::Sysreg, &timing()).unwrap();
    assert!(s.spread.min_ns < s.spread.median_ns && s.spread.median_ns < s.spread.max_ns, "{:?}", s.spread);
    assert!(s.spread.holds(s.spread.min_ns) && s.spread.holds(s.spread.max_ns) && !s.spread.holds(s.spread.max_ns * 1.01));
    assert_eq!(s.instructions, 4174.0);
}

#[test]
fn a_census_of_another_path_is_refused_naming_file_and_key() {
    let t = timing();
    let d = vtimer();
    // vwfi=trap: the timer class is a blocked vCPU's wake-up, not a running vCPU's interrupt.
    let trap = LabCensus::load("xen-timer-credit2-trap").unwrap();
    let e = err(Segment::new(&trap, &d.spec, GicIf::Mmio, &t));
    assert!(e.starts_with("crates/sim/census/lab/xen-timer-credit2-trap.json: key `lab_run.params.vwfi`") && e.contains("native"), "{e}");
    let ipi = LabCensus::load("xen-ipi-credit2-native").unwrap();
    assert!(err(Segment::new(&ipi, &d.spec, GicIf::Mmio, &t)).contains("key `lab_run.params.bench`"));
    let e = err(changed("xen-timer-credit2-native", |v| v["lab_run"]["platform"]["hypervisor"] = "Linux 6.1 KVM".into()).and_then(|c| Segment::new(&c, &d.spec, GicIf::Mmio, &t)));
    assert!(e.contains("key `lab_run.platform.hypervisor`"), "{e}");
    let e = err(changed("xen-timer-credit2-native", |v| {
        let cl = v["census"]["classes"].as_object_mut().unwrap();
        let timer = cl.remove("timer").unwrap();
        cl.insert("tick".into(), timer);
    })
    .and_then(|c| Segment::new(&c, &d.spec, GicIf::Mmio, &t)));
    assert!(e.contains("key `census.classes.timer`") && e.contains("tick"), "{e}");
    let e = err(changed("xen-timer-credit2-native", |v| v["census"]["classes"]["timer"]["exceptions"] = serde_json::json!({"EL1 IRQ": 20}))
        .and_then(|c| Segment::new(&c, &d.spec, GicIf::Mmio, &t)));
    assert!(e.contains("key `census.classes.timer.exceptions`"), "{e}");
    // A GICv2 board cannot have a redistributor access; a GICv3 board no GICH register.
    let redist = |v: &mut Value| {
        v["census"]["classes"]["timer"]["gic"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"block": "GICR", "count": 20, "kind": "mmio", "register": "GICR_INVLPIR", "rw": "w"}))
    };
    let e = err(changed("xen-timer-credit2-native", redist).and_then(|c| Segment::new(&c, &d.spec, GicIf::Mmio, &t)));
    assert!(e.contains("key `census.classes.timer.gic.GICR_INVLPIR w`") && e.contains("GICv2"), "{e}");
    let v2 = |v: &mut Value| {
        v["census"]["classes"]["timer"]["gic"].as_array_mut().unwrap().push(serde_json::json!({"block": "GICH", "count": 20, "kind": "mmio", "register": "GICH_LR0", "rw": "w"}))
    };
    let e = err(changed("xen-timer-credit2-native", v2).and_then(|c| Segment::new(&c, &d.spec, GicIf::Sysreg, &t)));
    assert!(e.contains("key `census.classes.timer.gic.GICH_LR0 w`") && e.contains("GICv3"), "{e}");
    let e = err(changed("xen-timer-credit2-native", |v| {
        v["census"]["classes"]["timer"]["by_el"]["unknown"] = 20.into();
        v["census"]["classes"]["timer"]["insns"] = serde_json::json!({"median": 905.0, "min": 905, "max": 905});
    })
    .and_then(|c| Segment::new(&c, &d.spec, GicIf::Mmio, &t)));
    assert!(e.contains("key `census.classes.timer.by_el.unknown`"), "{e}");
}

#[test]
fn bad_files_are_refused_naming_the_key() {
    assert!(err(LabCensus::parse("{", "c.json")).starts_with("c.json:"));
    let name = "xen-timer-credit2-native";
    assert!(err(changed(name, |v| v["lab_run"]["irqlab_commit"] = " ".into())).contains("key `lab_run.irqlab_commit`"));
    assert!(err(changed(name, |v| {
        v["lab_run"].as_object_mut().unwrap().remove("regenerate");
    }))
    .contains("regenerate"));
    assert!(err(changed(name, |v| v["census"]["classes"] = serde_json::json!({}))).contains("key `census.classes`"));
    assert!(err(changed(name, |v| v["census"]["classes"]["timer"]["paths"] = 0.into())).contains("key `census.classes.timer.paths`"));
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["insns"]["min"] = 905.into()));
    assert!(e.contains("key `census.classes.timer.insns`") && e.contains("min <= median"), "{e}");
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["by_el"]["EL3"] = 1.into()));
    assert!(e.contains("key `census.classes.timer.by_el.EL3`"), "{e}");
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["by_el"]["EL2"] = 36000.into()));
    assert!(e.contains("key `census.classes.timer.by_el`") && e.contains("outside"), "{e}");
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["functions"][0]["insns"] = 18000.into()));
    assert!(e.contains("key `census.classes.timer.functions`") && e.contains("EL2"), "{e}");
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["gic"][0]["rw"] = "rw".into()));
    assert!(e.contains("key `census.classes.timer.gic.ICC_IAR1_EL1.rw`"), "{e}");
    let e = err(changed(name, |v| v["census"]["classes"]["timer"]["exceptions"] = serde_json::json!({"IRQ": 20})));
    assert!(e.contains("key `census.classes.timer.exceptions.IRQ`"), "{e}");
    let e = err(changed(name, |v| v["colour"] = 1.into()));
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn load_refuses_unknown_names_and_reads_files() {
    let e = LabCensus::load("no-such-census").unwrap_err().to_string();
    assert!(e.contains("no-such-census") && e.contains("xen-timer-credit2-native"), "{e}");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/census/lab/xen-timer-credit-native.json");
    let c = LabCensus::load(path).unwrap();
    assert_eq!(c.file, path);
    assert_eq!(c.run.params["sched"], "credit");
    assert!(LabCensus::load("/nonexistent/x.json").unwrap_err().to_string().contains("/nonexistent/x.json"));
}
