//! GICv4.0 doorbell invalidation through a proxy device, versus GICv4.1 INVDB
//! (docs/sources.md B.3; Linux `irq-gic-v3-its.c` `its_vpe_db_proxy_map_locked`,
//! `its_vpe_db_proxy_unmap_locked`, `its_vpe_send_inv`, `its_vpe_4_1_invall`).
//!
//! On v4.0 a doorbell is an ordinary physical LPI with no DeviceID/EventID, so without
//! DirectLPI the only way to make a redistributor re-read its configuration byte (to enable or
//! mask it) is an ITS INV, which needs a mapping. Linux therefore creates one fake device (the
//! last DeviceID, roundup_pow_of_two(nr_cpu_ids) events, at least 2) and maps a vPE's doorbell
//! into it lazily with MAPTI when the doorbell is first invalidated, reusing slots round-robin
//! (the evicted vPE's event gets a DISCARD). Mask/unmask = config byte + INV on the proxy
//! event; moving the vPE = MOVI of the proxy event. On v4.1 the doorbell belongs to the vPE and
//! INVDB invalidates it: no proxy. This module only decides the commands; the caller queues them.
use std::collections::BTreeMap;

use crate::arch::arm::its::Command;

/// The v4.0 doorbell proxy device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyDevice {
    pub device: u32,
    /// Events in the proxy's ITT (= slots).
    pub nr_events: u32,
    pub itt_addr: u64,
    /// slot → vPE using it.
    slots: Vec<Option<u16>>,
    /// vPE → its slot.
    by_vpe: BTreeMap<u16, u32>,
    next_victim: u32,
}

/// `roundup_pow_of_two(n)`, at least 2 (Linux `its_create_device` allocates ≥ 2 ITEs).
pub fn proxy_events(nr_cpus: u32) -> u32 {
    nr_cpus.max(2).next_power_of_two()
}

impl ProxyDevice {
    /// A proxy device with `proxy_events(nr_cpus)` events whose ITT lives at `itt_addr`.
    pub fn new(device: u32, nr_cpus: u32, itt_addr: u64) -> ProxyDevice {
        let n = proxy_events(nr_cpus);
        ProxyDevice { device, nr_events: n, itt_addr, slots: vec![None; n as usize], by_vpe: BTreeMap::new(), next_victim: 0 }
    }

    /// The MAPD that creates the proxy (sent once, when the ITS is set up).
    pub fn mapd(&self) -> Command {
        Command::Mapd { device: self.device, size: (self.nr_events.trailing_zeros().max(1) - 1) as u8, itt_addr: self.itt_addr, valid: true }
    }

    /// The proxy slot of `vpe`, if its doorbell is mapped.
    pub fn slot(&self, vpe: u16) -> Option<u32> {
        self.by_vpe.get(&vpe).copied()
    }

    /// The vPE occupying each slot.
    pub fn occupants(&self) -> &[Option<u16>] {
        &self.slots
    }

    /// Make sure `vpe`'s doorbell `db_lpi` is mapped into the proxy (lazy MAPTI into collection
    /// `icid`, evicting the next victim with DISCARD), then the INV that makes the redistributor
    /// re-read the doorbell's configuration byte.
    pub fn invalidate(&mut self, vpe: u16, db_lpi: u32, icid: u16) -> Vec<Command> {
        let mut cmds = self.map(vpe, db_lpi, icid);
        let event = self.by_vpe[&vpe];
        cmds.push(Command::Inv { device: self.device, event });
        cmds
    }

    /// Set (INT) or clear (CLEAR) the doorbell's pending state through the proxy.
    pub fn set_pending(&mut self, vpe: u16, db_lpi: u32, icid: u16, pending: bool) -> Vec<Command> {
        let mut cmds = self.map(vpe, db_lpi, icid);
        let event = self.by_vpe[&vpe];
        cmds.push(if pending { Command::Int { device: self.device, event } } else { Command::Clear { device: self.device, event } });
        cmds
    }

    /// The vPE moved to collection `icid`: MOVI of its proxy event, if mapped.
    pub fn moved(&self, vpe: u16, icid: u16) -> Vec<Command> {
        self.slot(vpe).map(|event| vec![Command::Movi { device: self.device, event, icid }]).unwrap_or_default()
    }

    /// The vPE is being destroyed: DISCARD its proxy event, if mapped.
    pub fn unmap(&mut self, vpe: u16) -> Vec<Command> {
        match self.by_vpe.remove(&vpe) {
            Some(event) => {
                self.slots[event as usize] = None;
                vec![Command::Discard { device: self.device, event }]
            }
            None => vec![],
        }
    }

    fn map(&mut self, vpe: u16, db_lpi: u32, icid: u16) -> Vec<Command> {
        if self.by_vpe.contains_key(&vpe) {
            return vec![];
        }
        let mut cmds = Vec::new();
        let slot = self.next_victim;
        if let Some(victim) = self.slots[slot as usize] {
            cmds.extend(self.unmap(victim));
        }
        self.slots[slot as usize] = Some(vpe);
        self.by_vpe.insert(vpe, slot);
        self.next_victim = (slot + 1) % self.nr_events;
        cmds.push(Command::Mapti { device: self.device, event: slot, pintid: db_lpi, icid });
        cmds
    }
}

/// v4.1: the command that invalidates a vPE's doorbell configuration.
pub fn invdb(vpe: u16) -> Command {
    Command::Invdb { vpe }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_size_is_roundup_pow2_of_cpus() {
        assert_eq!(proxy_events(1), 2);
        assert_eq!(proxy_events(3), 4);
        assert_eq!(proxy_events(8), 8);
        assert_eq!(proxy_events(9), 16);
        let p = ProxyDevice::new(0xffff, 4, 0x100);
        assert_eq!(p.mapd(), Command::Mapd { device: 0xffff, size: 1, itt_addr: 0x100, valid: true });
    }

    #[test]
    fn lazy_mapti_then_inv_and_round_robin_eviction_with_discard() {
        let mut p = ProxyDevice::new(0xffff, 2, 0x100);
        let c = p.invalidate(10, 8300, 0);
        assert_eq!(c, vec![Command::Mapti { device: 0xffff, event: 0, pintid: 8300, icid: 0 }, Command::Inv { device: 0xffff, event: 0 }]);
        assert_eq!(p.invalidate(10, 8300, 0), vec![Command::Inv { device: 0xffff, event: 0 }], "mapped once, lazily");
        p.invalidate(11, 8301, 1);
        let c = p.invalidate(12, 8302, 1); // slot 0 again: evicts vPE 10
        assert_eq!(c[0], Command::Discard { device: 0xffff, event: 0 });
        assert_eq!(c[1], Command::Mapti { device: 0xffff, event: 0, pintid: 8302, icid: 1 });
        assert_eq!(p.slot(10), None);
        assert_eq!(p.occupants(), &[Some(12), Some(11)]);
        assert_eq!(p.moved(11, 3), vec![Command::Movi { device: 0xffff, event: 1, icid: 3 }]);
        assert!(p.moved(10, 3).is_empty());
    }
}
