//! Everything the Arm lab reads back from QEMU, on arbitrary bytes (issue 27): the console split
//! into lines, the Xen and KVM console watchers, the framed result files, the kernel's kvm event
//! trace, and QEMU's ITS trace converted to an its-check script. Checked: nothing panics; a
//! framed file is one plain name (it becomes a file under --out); a converted script is one
//! its-check reads back (the converter never writes what the checker refuses to parse).
#![no_main]
use std::time::Duration;

use lab::watch::{Bounds, Watch, Watcher};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut split = lab::session::LineSplitter::default();
    let half = data.len() / 2;
    let mut lines = split.push(&data[..half]);
    lines.extend(split.push(&data[half..]));
    let s = Duration::from_secs;
    let mut xen = Watcher::new(Bounds { boot: s(60), first_sample: s(60), silence: s(30), total: s(600) });
    let mut kvm = lab::kvm::KvmWatcher::new(s(60), s(600));
    for (i, l) in lines.iter().enumerate() {
        let now = Duration::from_millis(i as u64 * 7);
        if xen.line(l, now).is_none() {
            let _ = (xen.wait_for(now), xen.check(now));
        }
        if kvm.line(l, now).is_none() {
            let _ = (kvm.wait_for(now), kvm.check(now));
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(files) = lab::frame::framed_files(text) {
        for (name, _) in files {
            assert!(!name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('.') && !name.chars().any(char::is_control), "framed file name {name:?}");
        }
    }
    let _ = lab::kvm_events::exits_by_class(text);
    if let Ok(events) = lab::its_trace::parse(text) {
        let o = lab::its_script::Options::lab(lab::config::Gic::V4, vec!["fuzz".into()]);
        if let Ok(c) = lab::its_script::convert(&events, &o) {
            if let Err(e) = sim::arch::arm::gicv4::script::parse(&c.text) {
                panic!("a converted trace its-check cannot read: {e}\n{}", c.text);
            }
        }
    }
});
