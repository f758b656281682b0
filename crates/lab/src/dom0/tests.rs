//! Tests of [`super`] (kept apart so the module stays short).
use super::*;
use crate::frame::MARK;
use crate::watch::Watch;

#[test]
fn fio_arguments() {
    let j = Job::K4Qd4.fio_args(5).join(" ");
    assert!(j.contains("--bs=4k --iodepth=4 --numjobs=1") && j.contains("--runtime=5") && j.contains("--direct=1"), "{j}");
    assert!(Job::K16Qd1.fio_args(1).contains(&"--bs=16k".to_string()));
}

#[test]
fn command_lines() {
    let b = Boot { xen: "/c/xen".into(), xen_cmd: "X".into(), kernel: "/k".into(), initrd: "/i".into(), disk: "/d".into() };
    let none = crate::config::Instrument::default();
    let a = qemu_command(&b, Some("shift=2,sleep=off"), Some(Path::new("/q.log")), &none).join(" ");
    assert!(a.starts_with("-M virt,virtualization=on,gic-version=4,its=on -cpu max -smp 1 -m 2048 -icount shift=2,sleep=off"), "{a}");
    assert!(qemu_command(&b, None, None, &none).join(" ").contains("-smp 2 "));
    assert!(a.contains("-device guest-loader,addr=0x49000000,kernel=/k,bootargs=console=hvc0") && a.contains("guest-loader,addr=0x50000000,initrd=/i"));
    assert!(a.contains("-device nvme,drive=nv") && a.contains("-d int -D /q.log -trace gicv3_its_cmd_*"));
    assert_eq!(
        xen_cmdline("null", "native", 2, true, false),
        "console=dtuart dtuart=/pl011@9000000 dom0_mem=512M dom0_max_vcpus=2 dom0_vcpus_pin sched=null vwfi=native bootscrub=0"
    );
    let s = init_script(&["nvme_core".into(), "nvme".into()], &Job::K4Qd1.fio_args(2));
    assert!(s.find("insmod /lib/nvme/nvme_core.ko").unwrap() < s.find("insmod /lib/nvme/nvme.ko").unwrap());
    assert!(s.contains("/bin/fio --name=4k-qd1") && s.contains("@irqlab-lab file fio.json begin") && s.contains("poweroff -f"));
}

#[test]
fn refusals() {
    let x = XenConfig { vcpus: Some(2), ..XenConfig::default() };
    assert!(check(&x).unwrap_err().to_string().contains("--vcpus"));
    let x = XenConfig { sched: Sched::Null, ..XenConfig::default() };
    let e = check(&x).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("SCHED_NULL"), "{e}");
    assert!(check(&XenConfig::default()).is_ok());
}

#[test]
fn watcher_bounds_and_failures() {
    let mut d = Dom0Watcher::new(Duration::from_secs(100), Duration::from_secs(50), Duration::from_secs(1000), None);
    assert!(matches!(d.check(Duration::from_secs(100)), Some(Outcome::TimedOut(m)) if m.contains("/init")));
    assert_eq!(d.line(&format!("{MARK}init kernel=6.1 cpus=1"), Duration::from_secs(10)), None);
    assert!(matches!(d.check(Duration::from_secs(110)), Some(Outcome::TimedOut(m)) if m.contains("NVMe did not come up")));
    assert_eq!(d.line(&format!("{MARK}fio start"), Duration::from_secs(20)), None);
    assert_eq!(d.wait_for(Duration::from_secs(20)), Duration::from_secs(50));
    assert!(matches!(d.check(Duration::from_secs(70)), Some(Outcome::TimedOut(m)) if m.contains("fio did not finish")));
    let o = d.line("[   35.1] nvme nvme0: I/O 12 QID 1 timeout, aborting", Duration::from_secs(40));
    assert!(matches!(o, Some(Outcome::Failed(m)) if m.contains("NVMe I/O timed out")));
    assert_eq!(d.evidence.len(), 1);
    assert_eq!(d.line(&format!("{MARK}fio end rc=0"), Duration::from_secs(41)), None);
    assert_eq!(d.line(&format!("{MARK}done"), Duration::from_secs(42)), Some(Outcome::Done));
    assert!(matches!(d.line(&format!("{MARK}fail fio exited with 1"), Duration::from_secs(42)), Some(Outcome::Failed(m)) if m == "fio exited with 1"));
}
