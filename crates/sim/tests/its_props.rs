//! Property tests of the ITS model: random well-formed map/unmap sequences keep the tables
//! (walked in guest memory) equal to a plain BTreeMap reference; random 32-byte words and
//! random byte streams never panic the decoder, the queue, the parser or the checker.
use results::vocab::Gic;
use std::collections::BTreeMap;

use proptest::prelude::*;
use sim::arch::arm::gicv4::{check, script, GicConfig, GicSystem};
use sim::arch::arm::its::Command;

#[derive(Debug, Clone)]
enum Op {
    MapDevice { device: u32, bits: u8 },
    UnmapDevice { device: u32 },
    MapEvent { device: u32, event: u32, pintid: u32, icid: u16 },
    Discard { device: u32, event: u32 },
    MapCollection { icid: u16, rd: u64 },
    UnmapCollection { icid: u16 },
}

fn op() -> impl Strategy<Value = Op> {
    // Devbits = 4 here: DeviceIDs 16..20 are out of range; collections 0..6, redistributors 0..5 (4 exist).
    prop_oneof![
        (0u32..20, 1u8..4).prop_map(|(device, bits)| Op::MapDevice { device, bits }),
        (0u32..20).prop_map(|device| Op::UnmapDevice { device }),
        (0u32..20, 0u32..10, 8190u32..8300, 0u16..6).prop_map(|(device, event, pintid, icid)| Op::MapEvent { device, event, pintid, icid }),
        (0u32..20, 0u32..10).prop_map(|(device, event)| Op::Discard { device, event }),
        (0u16..6, 0u64..5).prop_map(|(icid, rd)| Op::MapCollection { icid, rd }),
        (0u16..6).prop_map(|icid| Op::UnmapCollection { icid }),
    ]
}

/// The reference: what each table should hold. ITT memory persists across MAPD V=0 (hardware
/// does not clear it), so events are keyed by device and survive an unmap/remap.
#[derive(Default)]
struct Model {
    devices: BTreeMap<u32, u8>,
    itt: BTreeMap<(u32, u32), (u32, u16)>,
    collections: BTreeMap<u16, u16>,
}

impl Model {
    /// Apply; returns whether the command is legal (no violation expected).
    fn apply(&mut self, op: &Op) -> bool {
        let events = |bits: u8| 1u32 << bits;
        match *op {
            Op::MapDevice { device, bits } => {
                if device >= 16 {
                    return false;
                }
                self.devices.insert(device, bits);
            }
            Op::UnmapDevice { device } => {
                if device >= 16 {
                    return false;
                }
                self.devices.remove(&device);
            }
            Op::MapEvent { device, event, pintid, icid } => {
                let Some(&bits) = self.devices.get(&device).filter(|_| device < 16) else { return false };
                if event >= events(bits) || pintid < 8192 {
                    return false;
                }
                self.itt.insert((device, event), (pintid, icid));
            }
            Op::Discard { device, event } => {
                let Some(&bits) = self.devices.get(&device).filter(|_| device < 16) else { return false };
                if event >= events(bits) || self.itt.remove(&(device, event)).is_none() {
                    return false;
                }
            }
            Op::MapCollection { icid, rd } => {
                if rd >= 4 {
                    return false;
                }
                self.collections.insert(icid, rd as u16);
            }
            Op::UnmapCollection { icid } => {
                self.collections.remove(&icid);
            }
        }
        true
    }
}

fn command(op: &Op) -> Command {
    // Each device's ITT at its own 64 KB slot.
    match *op {
        Op::MapDevice { device, bits } => Command::Mapd { device, size: bits - 1, itt_addr: 0x4000_0000 + device as u64 * 0x1_0000, valid: true },
        Op::UnmapDevice { device } => Command::Mapd { device, size: 0, itt_addr: 0, valid: false },
        Op::MapEvent { device, event, pintid, icid } => Command::Mapti { device, event, pintid, icid },
        Op::Discard { device, event } => Command::Discard { device, event },
        Op::MapCollection { icid, rd } => Command::Mapc { icid, rdbase: rd, valid: true },
        Op::UnmapCollection { icid } => Command::Mapc { icid, rdbase: 0, valid: false },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tables_match_a_reference_map(ops in proptest::collection::vec(op(), 1..60)) {
        let mut g = GicSystem::new(GicConfig { version: Gic::V4_1, cpus: 4, device_bits: 4, ..GicConfig::default() });
        let mut m = Model::default();
        for o in &ops {
            let legal = m.apply(o);
            let r = g.submit_command(0, command(o)).unwrap();
            prop_assert_eq!(r[0].violations.is_empty(), legal, "{:?} -> {:?}", o, r[0].violations);
        }
        let snap = check::mappings(&g);
        let got_dev: BTreeMap<u32, u8> = snap.devices.iter().map(|d| (d.device, d.event_bits as u8)).collect();
        prop_assert_eq!(&got_dev, &m.devices);
        let got_ev: BTreeMap<(u32, u32), (u32, u16)> = snap.devices.iter().flat_map(|d| d.events.iter().map(move |e| ((d.device, e.event), (e.intid, e.collection.unwrap())))).collect();
        let want_ev: BTreeMap<(u32, u32), (u32, u16)> = m.itt.iter().filter(|((d, e), _)| m.devices.get(d).is_some_and(|&b| *e < 1 << b)).map(|(k, v)| (*k, *v)).collect();
        prop_assert_eq!(got_ev, want_ev);
        let got_col: BTreeMap<u16, u16> = snap.collections.iter().map(|c| (c.collection, c.redistributor)).collect();
        prop_assert_eq!(got_col, m.collections);
    }

    #[test]
    fn random_command_words_never_panic(words in proptest::collection::vec(any::<[u64; 4]>(), 1..40), v in 0usize..3) {
        let version = [Gic::V3, Gic::V4_0, Gic::V4_1][v];
        let mut g = GicSystem::new(GicConfig { version, cpus: 2, its_count: 2, vmovp_single: false, ..GicConfig::default() });
        for w in &words {
            if let Ok(c) = Command::decode(*w) {
                prop_assert!(!c.to_string().is_empty());
            }
            let _ = g.submit(0, *w);
            let _ = g.submit(1, *w);
            let _ = g.translate(0, (w[0] >> 32) as u32 & 0x3f, w[1] as u32 & 7);
            let _ = g.write_vpendbaser(w[3] & 3, w[2]);
            let _ = g.poll_dirty(w[3] >> 8 & 3);
        }
        let _ = g.finish();
        let _ = check::mappings(&g);
    }

    #[test]
    fn random_bytes_never_panic_the_parser_or_checker(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        match script::parse(&text) {
            Ok(s) => {
                let _ = check::run(&s);
            }
            Err(e) => prop_assert!(e.line >= 1 && e.to_string().starts_with(&format!("line {}: ", e.line)), "{}", e),
        }
    }

}

/// A stream of commands, with each header line at most once and first (as the format requires),
/// so that the cases reach the checker; every parse error names its line; the cases that reach
/// the checker are counted and must be nearly all.
#[test]
fn random_line_soup_never_panics() {
    use proptest::test_runner::{TestCaseError, TestRunner};
    let headers = (proptest::option::of("gic v4\\.[01]"), proptest::option::of("vmovp [01]"), proptest::option::of("its-count [12]"));
    let body = proptest::collection::vec(
        prop_oneof![
            "its 0",
            "translate [0-9]{1,3} [0-9]{1,2}",
            "rd [0-3] (VPENDBASER|VPROPBASER) 0x[0-9a-f]{1,16}",
            "rd [0-3] poll-dirty",
            "lpi-config 8[2-9][0-9]{2} (enable|disable)",
            "ack-vlpi [0-9] 82[0-9]{2}",
            "0x[0-9a-f]{1,16} 0x[0-9a-f]{1,16} 0x[0-9a-f]{1,16} 0x[0-9a-f]{1,16}",
        ],
        0..60,
    );
    let (cases, checked) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&(headers, body), |((g, v, n), lines)| {
            let text: Vec<String> = [g, v, n].into_iter().flatten().chain(lines).collect();
            cases.set(cases.get() + 1);
            match script::parse(&text.join("\n")) {
                Ok(s) => {
                    checked.set(checked.get() + 1);
                    let r = check::run(&s);
                    prop_assert_eq!(r.steps.len(), s.items.len());
                }
                Err(e) => {
                    if !e.to_string().starts_with(&format!("line {}: ", e.line)) || e.line == 0 {
                        return Err(TestCaseError::fail(format!("parse error does not name its line: {e}")));
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!("{} streams, {} reached the checker", cases.get(), checked.get());
    assert!(checked.get() * 10 >= cases.get() * 9, "nearly every well-formed stream reaches the checker");
}
