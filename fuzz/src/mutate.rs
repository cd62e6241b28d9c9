//! Mutations of one input: AFL-style havoc (bit flips, byte edits, block insert / delete /
//! copy), the field's trouble tokens (NaN, huge indices, byte-order marks, …), and splices
//! with another corpus entry. Every draw comes from the caller's seeded generator.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The longest input produced.
pub const MAX_LEN: usize = 1 << 16;

/// Strings that break readers of text data files.
const TOKENS: &[&[u8]] = &[
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1e308",
    b"-1",
    b"0",
    b"4294967296",
    b"18446744073709551616",
    b"99999999999",
    b"\xef\xbb\xbf",
    b"\n",
    b"\r\n",
    b",",
    b";",
    b":",
    b" ",
    b"\t",
    b"?",
    b"\"",
    b"'",
    b"{",
    b"}",
    b"%",
    b"@attribute a numeric\n",
    b"@attribute c {x,y}\n",
    b"@data\n",
    b"@relation r\n",
    b"<label name=\"a\"></label>",
    b"</labels>",
    b"0,1,2 ",
    b"1:0.5 ",
];

/// A mutated copy of `input`; `other` is another corpus entry for splicing.
pub fn mutate(input: &[u8], other: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = 1 << rng.random_range(0..5);
    for _ in 0..rounds {
        one(&mut out, other, rng);
    }
    out.truncate(MAX_LEN);
    out
}

fn one(out: &mut Vec<u8>, other: &[u8], rng: &mut ChaCha8Rng) {
    let len = out.len();
    let pos = |rng: &mut ChaCha8Rng, n: usize| if n == 0 { 0 } else { rng.random_range(0..n) };
    match rng.random_range(0..10) {
        0 if len > 0 => {
            let p = pos(rng, len);
            out[p] ^= 1 << rng.random_range(0..8);
        }
        1 if len > 0 => {
            let p = pos(rng, len);
            out[p] = rng.random();
        }
        2 if len > 0 => {
            let p = pos(rng, len);
            out[p] = out[p]
                .wrapping_add(rng.random_range(1..=35))
                .wrapping_sub(17);
        }
        3 if len > 1 => {
            let a = pos(rng, len);
            let n = rng.random_range(1..=(len - a).min(64));
            out.drain(a..a + n);
        }
        4 if len > 0 => {
            let a = pos(rng, len);
            let n = rng.random_range(1..=(len - a).min(64));
            let block = out[a..a + n].to_vec();
            let at = pos(rng, len + 1);
            out.splice(at..at, block);
        }
        5 | 6 => {
            let t = TOKENS[rng.random_range(0..TOKENS.len())];
            let at = pos(rng, len + 1);
            if rng.random_bool(0.5) || at + t.len() > len {
                out.splice(at..at, t.iter().copied());
            } else {
                out[at..at + t.len()].copy_from_slice(t);
            }
        }
        7 => replace_number(out, rng),
        8 if !other.is_empty() => {
            // splice: our head, the other's tail
            let cut = pos(rng, len + 1);
            let from = pos(rng, other.len());
            out.truncate(cut);
            out.extend_from_slice(&other[from..]);
        }
        _ => {
            // duplicate a line, the usual way to make a file longer
            if let Some(start) = out.iter().rposition(|&b| b == b'\n') {
                let line = out[start..].to_vec();
                out.extend_from_slice(&line);
            } else {
                out.push(b'\n');
            }
        }
    }
}

/// Replaces one run of digits with a boundary number.
fn replace_number(out: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
    let starts: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].is_ascii_digit() && (i == 0 || !out[i - 1].is_ascii_digit()))
        .collect();
    if starts.is_empty() {
        return;
    }
    let a = starts[rng.random_range(0..starts.len())];
    let b = (a..out.len())
        .find(|&i| !out[i].is_ascii_digit())
        .unwrap_or(out.len());
    const NUMBERS: &[&[u8]] = &[
        b"0",
        b"1",
        b"2",
        b"255",
        b"256",
        b"65536",
        b"2147483648",
        b"4000000000",
        b"9223372036854775807",
        b"18446744073709551615",
    ];
    let n = NUMBERS[rng.random_range(0..NUMBERS.len())];
    out.splice(a..b, n.iter().copied());
}
