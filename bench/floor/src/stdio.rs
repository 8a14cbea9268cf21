//! The stdio floor: newline-delimited JSON-RPC, one thread, no runtime. Answers are
//! buffered and flushed when no more input is already buffered (so a burst of requests
//! costs one write).

#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, BufWriter, Write};

fn main() -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    let mut answer = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return output.flush();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        answer.clear();
        floor::answer(&line, &mut answer);
        output.write_all(&answer)?;
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}
