//! Packets for a forwarding pipeline: Ethernet frames carrying UDP over IPv4 or IPv6, one per
//! trace address (its destination), families mixed by a share, written as a pcap file (what
//! DPDK's pcap driver replays, and what `tcpdump -r` reads).
//!
//! Every frame has the same size (`frame_len` bytes on the wire without the FCS, the UDP
//! payload zero-filled to make it up) and fixed sources from the benchmarking ranges
//! (198.18.0.1, RFC 2544; 2001:2::1, RFC 5180), so the only thing that changes from packet to
//! packet is the destination: a pipeline fed by them differs only in its lookups.
//!
//! ```
//! use ipfib_gen::packets::{frames, Destination, FrameOptions};
//!
//! let order = [Destination::V4(0x0a00_0001), Destination::V6(0x2001_0db8 << 96)];
//! let mut pcap = Vec::new();
//! frames(&order, &FrameOptions::default(), &mut pcap).unwrap();
//! assert_eq!(pcap.len(), 24 + 2 * (16 + 64)); // the file header, then two records
//! ```

use std::io::Write;
use std::time::Duration;

use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// One packet's destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// An IPv4 address (`u32::from(Ipv4Addr)`).
    V4(u32),
    /// An IPv6 address (`u128::from(Ipv6Addr)`).
    V6(u128),
}

/// The frames' shape.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameOptions {
    /// Bytes per frame, Ethernet header included, FCS not (64 is the smallest frame a
    /// packet generator sends counting its FCS, the usual Mpps benchmark size).
    pub frame_len: usize,
}

impl Default for FrameOptions {
    fn default() -> Self {
        FrameOptions {
            frame_len: DEFAULT_FRAME_LEN,
        }
    }
}

impl FrameOptions {
    /// Frames of `frame_len` bytes; outside [`MIN_FRAME_LEN`]..=[`MAX_FRAME_LEN`] an error (the
    /// one place the range is checked: [`frames`] checks its options through it).
    pub fn with_frame_len(frame_len: usize) -> Result<Self, PacketError> {
        if (MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&frame_len) {
            Ok(FrameOptions { frame_len })
        } else {
            Err(PacketError::FrameLen(frame_len))
        }
    }
}

/// The default frame size: 64 bytes.
pub const DEFAULT_FRAME_LEN: usize = 64;
/// The smallest frame size that holds an IPv6 UDP packet: Ethernet (14), IPv6 (40), UDP (8).
pub const MIN_FRAME_LEN: usize = 14 + 40 + 8;
/// The largest frame size: a standard 1500-byte MTU plus the Ethernet header.
pub const MAX_FRAME_LEN: usize = 1514;

/// Why packets cannot be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PacketError {
    /// The frame size is outside [`MIN_FRAME_LEN`]..=[`MAX_FRAME_LEN`].
    #[error("a frame of {0} bytes cannot carry the packets: between {MIN_FRAME_LEN} and {MAX_FRAME_LEN} bytes")]
    FrameLen(usize),
    /// Writing failed.
    #[error("writing the pcap file: {0}")]
    Write(#[from] pcap_file::PcapError),
}

/// The order of `v4.len() + v6.len()` packets that spreads the IPv6 ones evenly: packet `i` is
/// IPv6 when `floor((i + 1) * n6 / n)` exceeds `floor(i * n6 / n)`, so every prefix of the
/// sequence holds its share of each family, within one packet. Each family's addresses keep
/// their order.
pub fn interleave(v4: &[u32], v6: &[u128]) -> Vec<Destination> {
    let (n6, n) = (v6.len() as u128, (v4.len() + v6.len()) as u128);
    let (mut a4, mut a6) = (v4.iter(), v6.iter());
    (0..n)
        .map(|i| {
            let six = (i + 1) * n6 / n > i * n6 / n;
            match six {
                true => Destination::V6(*a6.next().expect("n6 IPv6 turns in all")),
                false => Destination::V4(*a4.next().expect("n - n6 IPv4 turns in all")),
            }
        })
        .collect()
}

/// How many of `count` packets are IPv6 for a share `v6_share` (0 to 1) of IPv6: the nearest
/// whole number.
pub fn ipv6_count(count: usize, v6_share: f64) -> usize {
    ((count as f64 * v6_share.clamp(0.0, 1.0)).round() as usize).min(count)
}

/// Writes one frame per destination, in order, as a pcap file (microsecond timestamps 1 µs
/// apart from 0, link type Ethernet).
pub fn frames(
    order: &[Destination],
    options: &FrameOptions,
    out: impl Write,
) -> Result<(), PacketError> {
    let len = FrameOptions::with_frame_len(options.frame_len)?.frame_len;
    const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
    const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
    const SRC_V4: [u8; 4] = [198, 18, 0, 1];
    const SRC_V6: [u8; 16] = [0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const TTL: u8 = 64;
    const PORTS: (u16, u16) = (1024, 9);
    let zeros = vec![0u8; len];
    let mut frame = Vec::with_capacity(len);
    let mut writer = PcapWriter::new(out)?;
    for (i, dest) in order.iter().enumerate() {
        let ethernet = PacketBuilder::ethernet2(SRC_MAC, DST_MAC);
        let udp = match *dest {
            Destination::V4(a) => ethernet.ipv4(SRC_V4, a.to_be_bytes(), TTL),
            Destination::V6(a) => ethernet.ipv6(SRC_V6, a.to_be_bytes(), TTL),
        }
        .udp(PORTS.0, PORTS.1);
        let payload = len - udp.size(0);
        frame.clear();
        udp.write(&mut frame, &zeros[..payload])
            .expect("a Vec takes any write, and the payload fits the headers' length fields");
        let time = Duration::from_micros(i as u64);
        writer.write_packet(&PcapPacket::new(time, len as u32, &frame))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket};
    use pcap_file::pcap::PcapReader;

    /// The frames read back: each destination in order, every frame `frame_len` long, the
    /// IPv4 header checksum right.
    #[test]
    fn frames_read_back_as_written() {
        let v4: Vec<u32> = (0..7).map(|i| 0x0a00_0000 + i * 977).collect();
        let v6: Vec<u128> = (0..3).map(|i| (0x2001_0db8 << 96) | (i * 12_345)).collect();
        let order = interleave(&v4, &v6);
        for len in [MIN_FRAME_LEN, 64, 128, MAX_FRAME_LEN] {
            let mut pcap = Vec::new();
            frames(&order, &FrameOptions { frame_len: len }, &mut pcap).unwrap();
            let mut reader = PcapReader::new(&pcap[..]).unwrap();
            let mut seen = Vec::new();
            while let Some(packet) = reader.next_packet() {
                let packet = packet.unwrap();
                assert_eq!(packet.data.len(), len);
                assert_eq!(packet.orig_len as usize, len);
                let sliced = SlicedPacket::from_ethernet(&packet.data).unwrap();
                seen.push(match sliced.net.unwrap() {
                    NetSlice::Ipv4(ip) => {
                        let header = ip.header().to_header();
                        assert_eq!(header.header_checksum, header.calc_header_checksum());
                        Destination::V4(u32::from(ip.header().destination_addr()))
                    }
                    NetSlice::Ipv6(ip) => {
                        Destination::V6(u128::from(ip.header().destination_addr()))
                    }
                    other => panic!("not IP: {other:?}"),
                });
            }
            assert_eq!(seen, order, "frame length {len}");
        }
    }

    /// The families are spread evenly, each family's order kept.
    #[test]
    fn interleave_spreads_the_families_evenly() {
        for (n4, n6) in [(0, 5), (5, 0), (1, 1), (7, 3), (3, 7), (999, 1), (50, 50)] {
            let v4: Vec<u32> = (0..n4).collect();
            let v6: Vec<u128> = (0..u128::from(n6)).collect();
            let order = interleave(&v4, &v6);
            assert_eq!(order.len(), (n4 + n6) as usize);
            let (mut seen4, mut seen6) = (Vec::new(), Vec::new());
            for (i, d) in order.iter().enumerate() {
                match *d {
                    Destination::V4(a) => seen4.push(a),
                    Destination::V6(a) => seen6.push(a),
                }
                // Within one packet of the exact share at every prefix.
                let want = (i + 1) as f64 * f64::from(n6) / f64::from(n4 + n6);
                assert!((seen6.len() as f64 - want).abs() < 1.0, "{n4}/{n6} at {i}");
            }
            assert_eq!((seen4, seen6), (v4, v6));
        }
        assert_eq!(ipv6_count(10, 0.25), 3);
        assert_eq!(ipv6_count(10, 1.5), 10);
        assert_eq!(ipv6_count(10, -1.0), 0);
    }

    #[test]
    fn frame_sizes_outside_the_range_are_refused() {
        let order = [Destination::V4(1)];
        for len in [0, MIN_FRAME_LEN - 1, MAX_FRAME_LEN + 1] {
            let err = frames(&order, &FrameOptions { frame_len: len }, Vec::new()).unwrap_err();
            assert!(err.to_string().contains(&len.to_string()), "{err}");
        }
    }
}
