//! Criterion benchmarks of the message path: classify + parse of a `tools/call` request,
//! serialization of its typed response, and classification of malformed input.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferry_protocol::jsonrpc::{Inbound, Message, Request, ResultResponse, classify, parse_params};
use ferry_protocol::types::{CallToolRequestParams, CallToolResult, ContentBlock};
use ferry_protocol::{ProtocolVersion, RequestId, conform::Conform};

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, ferry","count":3},"_meta":{"progressToken":"p-42"}}}"#;

fn parse_request(c: &mut Criterion) {
    let mut group = c.benchmark_group("tools/call request");
    group.throughput(Throughput::Bytes(CALL.len() as u64));
    group.bench_function("classify", |b| {
        b.iter(|| black_box(classify(black_box(CALL))));
    });
    group.bench_function("classify + parse params", |b| {
        b.iter(|| {
            let Inbound::Single(Message::Request(req)) = classify(black_box(CALL)) else {
                unreachable!("valid request")
            };
            let params: CallToolRequestParams =
                parse_params(req.params.as_deref()).expect("params parse");
            black_box((req.id, params))
        });
    });
    let params: CallToolRequestParams = serde_json::from_slice::<serde_json::Value>(CALL)
        .ok()
        .and_then(|v| serde_json::from_value(v["params"].clone()).ok())
        .expect("params");
    group.bench_function("serialize typed request", |b| {
        let req = Request::new(42, "tools/call", params.clone());
        b.iter(|| black_box(serde_json::to_vec(black_box(&req)).expect("serializes")));
    });
    group.finish();
}

fn serialize_response(c: &mut Criterion) {
    let mut group = c.benchmark_group("tools/call response");
    let result = CallToolResult {
        structured_content: Some(serde_json::json!({"message": "hello, ferry", "count": 3})),
        ..CallToolResult::success(vec![ContentBlock::text("hello, ferry")])
    };
    group.bench_function("conform + serialize", |b| {
        b.iter(|| {
            let mut result = result.clone();
            result
                .conform(ProtocolVersion::V2025_06_18)
                .expect("conforms");
            let response = ResultResponse::new(RequestId::Number(42), result);
            black_box(serde_json::to_vec(&response).expect("serializes"))
        });
    });
    let bytes = serde_json::to_vec(&ResultResponse::new(RequestId::Number(42), result.clone()))
        .expect("serializes");
    group.bench_function("parse (client side)", |b| {
        b.iter(|| {
            let Inbound::Single(Message::Response(r)) = classify(black_box(&bytes)) else {
                unreachable!("valid response")
            };
            black_box(r)
        });
    });
    group.finish();
}

/// A tool's text result written by `CallToolResult::to_json` against serde's serializer,
/// and from its text alone (`CallToolResult::text_json`, a tool returning a `String`,
/// including building the result it replaces): the usual one-line result, and a 4 KB one
/// (where escaping is most of the work).
fn write_tool_result(c: &mut Criterion) {
    let mut group = c.benchmark_group("tool result to JSON");
    let line = "hello world hello world hello world hello w".to_owned();
    let page = "A line of a tool's output, with \"quotes\" now and then.\n".repeat(70);
    for (name, text) in [("one line", line), ("4 KB", page)] {
        let result = CallToolResult::success(vec![ContentBlock::text(&text)]);
        group.bench_function(format!("{name}: to_json"), |b| {
            b.iter(|| black_box(black_box(&result).to_json().expect("writes")))
        });
        group.bench_function(format!("{name}: serde_json::to_string"), |b| {
            b.iter(|| black_box(serde_json::to_string(black_box(&result)).expect("serializes")))
        });
        // Both from the tool's own `String` (cloned here for each run, in both).
        group.bench_function(format!("{name}: build + to_json"), |b| {
            b.iter(|| {
                let output = black_box(&text).clone();
                let result = CallToolResult::success(vec![ContentBlock::text(output)]);
                black_box(result.to_json().expect("writes"))
            })
        });
        group.bench_function(format!("{name}: text_json"), |b| {
            b.iter(|| {
                let output = black_box(&text).clone();
                black_box(CallToolResult::text_json(&output))
            })
        });
    }
    group.finish();
}

fn malformed(c: &mut Criterion) {
    let mut group = c.benchmark_group("malformed");
    let cases: [(&str, &[u8]); 4] = [
        (
            "invalid json",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"#,
        ),
        (
            "invalid utf-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}",
        ),
        (
            "null id",
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
        ),
        (
            "float id",
            br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}"#,
        ),
    ];
    for (name, input) in cases {
        group.bench_function(name, |b| b.iter(|| black_box(classify(black_box(input)))));
    }
    group.finish();
}

criterion_group!(
    benches,
    parse_request,
    serialize_response,
    write_tool_result,
    malformed
);
criterion_main!(benches);
