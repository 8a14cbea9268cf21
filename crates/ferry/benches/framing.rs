//! Criterion benchmarks of line framing ([`Transport::lines`]): splitting a byte stream of
//! newline-delimited messages into frames, and writing queued frames out in batches.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferry::engine::{Transport, TransportEvent};

const CALL: &str = r#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"the quick brown fox jumps over the lazy dog"}}}"#;

/// Frames per measured batch.
const FRAMES: u64 = 1000;

fn framing(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("line framing");
    group.throughput(Throughput::Elements(FRAMES));

    let input = format!("{CALL}\n").repeat(FRAMES as usize).into_bytes();
    group.bench_function("read 1000 frames", |b| {
        b.iter_custom(|batches| {
            let start = Instant::now();
            for _ in 0..batches {
                let input = std::io::Cursor::new(input.clone());
                runtime.block_on(async {
                    let mut transport = Transport::lines(input, tokio::io::sink(), 1 << 20, 64);
                    let mut frames = 0;
                    while let Some(event) = transport.incoming.recv().await {
                        assert!(matches!(event, TransportEvent::Frame(_)));
                        frames += 1;
                    }
                    assert_eq!(frames, FRAMES);
                });
            }
            start.elapsed()
        });
    });

    group.bench_function("write 1000 frames", |b| {
        b.iter_custom(|batches| {
            let start = Instant::now();
            for _ in 0..batches {
                runtime.block_on(async {
                    let mut transport =
                        Transport::lines(tokio::io::empty(), tokio::io::sink(), 1 << 20, 64);
                    for _ in 0..FRAMES {
                        let frame = black_box(CALL.as_bytes().to_vec());
                        transport.outgoing.send(frame).await.expect("writer runs");
                    }
                    let writer = transport.writer.take().expect("a writer");
                    writer.flush_and_close(Duration::from_secs(5)).await;
                });
            }
            start.elapsed()
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = framing
}
criterion_main!(benches);
