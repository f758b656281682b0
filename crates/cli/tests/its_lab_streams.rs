//! The real ITS command streams captured in the Arm lab (examples/its/lab-*-v40.its, issue 23
//! item 3) through `irqlab its-check`: clean as GICv4.0 (what QEMU 7.2's ITS is), with the
//! commands that make them what their headers say they are (VMAPP/VINVALL at VM start, VMOVP per
//! vCPU move); and, with the same words under `gic v4.1`, the VMAPP rejected for its missing
//! default doorbell and every later vPE command finding vPE 0 unmapped. No lab is needed.
use std::path::{Path, PathBuf};
use std::process::Command;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/its").join(name)
}

fn check(file: &Path) -> (i32, serde_json::Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab")).arg("its-check").arg(file).args(["--format", "json"]).output().expect("irqlab runs");
    let j = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{}: {e}: {}", file.display(), String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), j)
}

/// Decoded commands by name (the first word of each step's description).
fn count(j: &serde_json::Value, name: &str) -> usize {
    j["steps"].as_array().unwrap().iter().filter(|s| s["decoded"].as_str().unwrap().split_whitespace().next() == Some(name)).count()
}

/// The same stream with its `gic v4.0` header swapped for `gic v4.1`.
fn as_v41(file: &Path, dir: &Path) -> PathBuf {
    let t = std::fs::read_to_string(file).unwrap();
    assert_eq!(t.lines().filter(|l| *l == "gic v4.0").count(), 1, "{}", file.display());
    let p = dir.join(file.file_name().unwrap());
    std::fs::write(&p, t.replace("\ngic v4.0\n", "\ngic v4.1\n")).unwrap();
    p
}

fn line_of(file: &Path, n: u64) -> String {
    std::fs::read_to_string(file).unwrap().lines().nth(n as usize - 1).unwrap().to_string()
}

#[test]
fn vm_start_stream_is_clean_on_v40_and_maps_then_unmaps_one_vpe() {
    let f = example("lab-vm-start-v40.its");
    let (code, j) = check(&f);
    assert_eq!(code, 0, "{}", j["violations"]);
    assert_eq!(j["gic"], "GICv4.0");
    assert_eq!((count(&j, "VMAPP"), count(&j, "VINVALL"), count(&j, "VMOVP")), (2, 1, 0), "VMAPP V=1 at start and V=0 at teardown, no move");
    assert_eq!(count(&j, "MAPTI"), 1, "the doorbell LPI on the v4.0 proxy device");
    assert_eq!(count(&j, "VMAPTI"), 0, "a KVM_SIGNAL_MSI LPI is KVM's software path, not a vLPI");
    assert!(j["mappings"]["vpes"].as_array().unwrap().is_empty(), "the vPE is unmapped at teardown");
    assert!(j["steps"].as_array().unwrap().iter().any(|s| s["decoded"].as_str().unwrap().contains("GICR_VPENDBASER")), "the residency protocol is in the stream");
}

#[test]
fn vcpu_move_stream_is_clean_on_v40_with_five_vmovps_alternating_redistributors() {
    let f = example("lab-vcpu-move-v40.its");
    let (code, j) = check(&f);
    assert_eq!(code, 0, "{}", j["violations"]);
    let moves: Vec<String> = j["steps"].as_array().unwrap().iter().map(|s| s["decoded"].as_str().unwrap().to_string()).filter(|d| d.starts_with("VMOVP")).collect();
    assert_eq!(moves.len(), 5, "{moves:?}");
    for (i, m) in moves.iter().enumerate() {
        let to = if i % 2 == 0 { 1 } else { 0 };
        assert!(m.starts_with(&format!("VMOVP vPE 0 -> redistributor {to} ")), "{m}");
    }
    assert_eq!(count(&j, "MOVI"), 5, "the proxy doorbell follows each move");
}

#[test]
fn the_same_words_on_v41_lose_the_vmapp_and_then_every_vpe_command() {
    let d = tempfile::tempdir().unwrap();
    for name in ["lab-vm-start-v40.its", "lab-vcpu-move-v40.its"] {
        let f = as_v41(&example(name), d.path());
        let (code, j) = check(&f);
        assert_eq!(code, 1, "{name}");
        let v = j["violations"].as_array().unwrap();
        assert_eq!(v[0]["kind"], "intid-out-of-range", "{name}: {}", v[0]);
        assert!(v[0]["message"].as_str().unwrap().contains("default doorbell pINTID 0"), "{}", v[0]);
        assert!(line_of(&f, v[0]["line"].as_u64().unwrap()).ends_with(": VMAPP"), "{name}: the first violation is the VMAPP");
        assert!(v[1..].iter().all(|x| x["kind"] == "unmapped-vpe"), "{name}: {v:?}");
        assert!(v.len() >= 2, "{name}");
    }
}

/// GICv4 direct injection for real (the `vfio-msi` path with `--gic v4`): the assigned device's
/// event is mapped to a host LPI, then moved to a vLPI of the guest's vPE (DISCARD + VMAPTI with
/// its doorbell), every MSI of the run is a TRANSLATER write KVM never sees, and teardown puts the
/// host LPI back and unmaps the vPE. Clean as GICv4.0.
#[test]
fn vfio_direct_stream_maps_the_devices_event_to_a_vlpi_on_v40() {
    let f = example("lab-vfio-direct-v40.its");
    let (code, j) = check(&f);
    assert_eq!(code, 0, "{}", j["violations"]);
    let steps: Vec<String> = j["steps"].as_array().unwrap().iter().map(|s| s["decoded"].as_str().unwrap().to_string()).collect();
    let vmapti: Vec<&String> = steps.iter().filter(|d| d.starts_with("VMAPTI")).collect();
    assert_eq!(vmapti.len(), 1, "{vmapti:?}");
    assert!(vmapti[0].starts_with("VMAPTI device 0x10 event 0 -> vPE 0 vINTID 8192"), "{}", vmapti[0]);
    let at = |p: &str| steps.iter().position(|d| d.starts_with(p)).unwrap_or_else(|| panic!("no {p}"));
    let first_translate = at("GITS_TRANSLATER: device 0x10");
    assert!(at("VMAPP vPE 0 -> redistributor") < at("VMAPTI") && at("VMAPTI") < first_translate, "vPE, then the vLPI, then the device's MSIs");
    assert_eq!(steps.iter().filter(|d| d.starts_with("GITS_TRANSLATER: device 0x10 event 0")).count(), 21, "20 samples + the discarded first");
    assert!(steps.iter().rposition(|d| d.starts_with("VMAPP vPE 0 unmap")).unwrap() > first_translate, "the vPE is unmapped at teardown");
    assert_eq!(steps.last().unwrap(), "MAPD device 0x10 unmap");
}
