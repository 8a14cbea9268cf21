//! A session's definitions as JSON, for sessions shared between instances (Streamable HTTP
//! over Redis): the variables, and the scripts that define its functions (compiled again
//! where they are read, since Rhai cannot write a function back as source).
//!
//! Values keep their Rhai type: integers and floats are told apart by the JSON number
//! (`1` against `1.0`), and the types JSON has no form for are one-key objects — `{"m":
//! {..}}` an object map, `{"c": "x"}` a character, `{"b": [..]}` a blob, `{"f": "NaN"}` a
//! float JSON cannot write, `{"p": name, "a": [..]}` a function pointer and its curried
//! arguments. A timestamp (a moment of one machine's clock) and a closure (a function
//! known only by a generated name) cannot be shared: a script that leaves one in a
//! variable fails as not kept.
//!
//! Both ways recurse over nested values: they run on the script's thread, whose stack
//! holds far more than [`MAX_KEPT_DEPTH`](super::MAX_KEPT_DEPTH) levels.

use rhai::{AST, Array, Blob, Dynamic, Engine, FnPtr, Map, Scope};
use serde::Deserialize;
use serde_json::{Map as Object, Value, json};

/// A script kept because it defines functions the session still has, with the functions
/// (name, number of parameters) it is kept for.
#[derive(Clone)]
pub(super) struct Source {
    /// The script as it was submitted.
    pub(super) code: String,
    /// Its functions that no later script replaced.
    pub(super) defines: Vec<(String, usize)>,
}

/// Add `code`, which defines `defines`, to `sources`; drop earlier scripts whose functions
/// it all replaces.
pub(super) fn add_source(sources: &mut Vec<Source>, code: &str, defines: Vec<(String, usize)>) {
    for source in sources.iter_mut() {
        source.defines.retain(|f| !defines.contains(f));
    }
    sources.retain(|source| !source.defines.is_empty());
    sources.push(Source {
        code: code.to_owned(),
        defines,
    });
}

/// The functions `ast` defines, as (name, number of parameters).
pub(super) fn defined(ast: &AST) -> Vec<(String, usize)> {
    ast.iter_functions()
        .map(|f| (f.name.to_owned(), f.params.len()))
        .collect()
}

/// `scope` and `sources` as JSON text, or the name of a variable whose value has no JSON
/// form here, and its type.
pub(super) fn write(scope: &Scope<'_>, sources: &[Source]) -> Result<String, (String, String)> {
    let mut variables = Vec::with_capacity(scope.len());
    for (name, constant, value) in scope.iter_raw() {
        let value = to_json(value).map_err(|kind| (name.to_owned(), kind))?;
        variables.push(json!([name, constant, value]));
    }
    // `iter_raw` goes from the newest variable to the oldest; they are pushed back oldest
    // first, so that a name defined twice still reads as its newest.
    variables.reverse();
    let functions: Vec<Value> = sources
        .iter()
        .map(|source| json!([source.code, source.defines]))
        .collect();
    Ok(json!({ "v": variables, "f": functions }).to_string())
}

/// The variables and functions written by [`write`], the scripts compiled with `engine`.
pub(super) fn read(
    engine: &Engine,
    text: &str,
) -> Result<(Scope<'static>, AST, Vec<Source>), String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    // Values nest up to the kept depth, twice that in JSON for maps: more than serde_json's
    // default limit of 128, and safe on this thread.
    reader.disable_recursion_limit();
    let state = Value::deserialize(&mut reader).map_err(|e| e.to_string())?;
    let shape = || "the state does not have the shape written".to_owned();
    let mut scope = Scope::new();
    for variable in state["v"].as_array().ok_or_else(shape)? {
        let (Some(name), Some(constant), Some(value)) =
            (variable[0].as_str(), variable[1].as_bool(), variable.get(2))
        else {
            return Err(shape());
        };
        let value = from_json(value)?;
        if constant {
            scope.push_constant_dynamic(name, value);
        } else {
            scope.push_dynamic(name, value);
        }
    }
    let mut functions = AST::empty();
    let mut sources = Vec::new();
    for source in state["f"].as_array().ok_or_else(shape)? {
        let code = source[0].as_str().ok_or_else(shape)?;
        let defines: Vec<(String, usize)> =
            serde_json::from_value(source[1].clone()).map_err(|e| e.to_string())?;
        let ast = engine.compile(code).map_err(|e| e.to_string())?;
        functions = functions.merge(&ast.clone_functions_only());
        sources.push(Source {
            code: code.to_owned(),
            defines,
        });
    }
    Ok((scope, functions, sources))
}

/// `value` in JSON, or its type name when it has no form here.
fn to_json(value: &Dynamic) -> Result<Value, String> {
    if value.is_unit() {
        Ok(Value::Null)
    } else if let Ok(b) = value.as_bool() {
        Ok(Value::Bool(b))
    } else if let Ok(n) = value.as_int() {
        Ok(Value::from(n))
    } else if let Ok(x) = value.as_float() {
        Ok(match serde_json::Number::from_f64(x) {
            Some(n) => Value::Number(n),
            None => json!({ "f": x.to_string() }),
        })
    } else if let Ok(c) = value.as_char() {
        Ok(json!({ "c": c }))
    } else if let Ok(s) = value.as_immutable_string_ref() {
        Ok(Value::String(s.as_str().to_owned()))
    } else if let Ok(array) = value.as_array_ref() {
        array
            .iter()
            .map(to_json)
            .collect::<Result<_, _>>()
            .map(Value::Array)
    } else if let Ok(map) = value.as_map_ref() {
        let mut object = Object::new();
        for (key, item) in map.iter() {
            object.insert(key.to_string(), to_json(item)?);
        }
        Ok(json!({ "m": object }))
    } else if let Ok(blob) = value.as_blob_ref() {
        Ok(json!({ "b": *blob }))
    } else if value.is_fnptr() {
        let pointer = value.clone_cast::<FnPtr>();
        // A closure's function is known only by a generated name, which `FnPtr::new`
        // refuses on the way back: it cannot be kept (as a timestamp cannot).
        if pointer.is_anonymous() {
            return Err("closure".to_owned());
        }
        let curried = pointer
            .iter_curry()
            .map(to_json)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({ "p": pointer.fn_name(), "a": curried }))
    } else {
        Err(value.type_name().to_owned())
    }
}

/// The value [`to_json`] wrote as `json`.
fn from_json(json: &Value) -> Result<Dynamic, String> {
    let bad = || format!("a value does not have the shape written: {json}");
    Ok(match json {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Dynamic::from_int(i),
            _ => Dynamic::from_float(n.as_f64().ok_or_else(bad)?),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(items) => {
            Dynamic::from_array(items.iter().map(from_json).collect::<Result<Array, _>>()?)
        }
        Value::Object(object) => {
            let (tag, inner) = object.iter().next().ok_or_else(bad)?;
            match (tag.as_str(), inner) {
                ("m", Value::Object(entries)) => {
                    let mut map = Map::new();
                    for (key, item) in entries {
                        map.insert(key.as_str().into(), from_json(item)?);
                    }
                    Dynamic::from_map(map)
                }
                ("c", Value::String(s)) => Dynamic::from_char(s.chars().next().ok_or_else(bad)?),
                ("f", Value::String(s)) => Dynamic::from_float(s.parse().map_err(|_| bad())?),
                ("b", Value::Array(_)) => Dynamic::from_blob(
                    serde_json::from_value::<Blob>(inner.clone()).map_err(|_| bad())?,
                ),
                ("p", Value::String(name)) => {
                    let mut pointer = FnPtr::new(name.as_str()).map_err(|e| e.to_string())?;
                    for item in object.get("a").and_then(Value::as_array).ok_or_else(bad)? {
                        pointer.add_curry(from_json(item)?);
                    }
                    Dynamic::from(pointer)
                }
                _ => return Err(bad()),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use rhai::packages::{Package, StandardPackage};
    use std::time::{Duration, Instant};

    use super::super::sandbox;
    use super::*;

    #[test]
    fn values_keep_their_types() {
        let engine = sandbox::engine(
            StandardPackage::new().as_shared_module(),
            Instant::now() + Duration::from_secs(5),
            || false,
        )
        .0;
        let mut scope = Scope::new();
        engine
            .run_with_scope(
                &mut scope,
                "let i = 0; let i = 1; let x = 1.0; let n = 0.0 / 0.0; let c = 'c'; let s = \"s\"; \
                 let b = blob(2, 7); let a = [(), true, [#{\"m\": 1, \"\": 'x'}]]; \
                 const K = 3; let p = Fn(\"f\").curry(2);",
            )
            .unwrap();
        let text = write(&scope, &[]).unwrap();
        let (read_scope, _, _) = read(&engine, &text).unwrap();
        for ((name, constant, value), (again, kept, back)) in
            scope.iter_raw().zip(read_scope.iter_raw())
        {
            assert_eq!((name, constant), (again, kept));
            assert_eq!(value.type_name(), back.type_name(), "{name}");
            assert_eq!(format!("{value:?}"), format!("{back:?}"), "{name}");
        }
        assert_eq!(scope.len(), read_scope.len());
    }

    #[test]
    fn timestamps_are_not_shared() {
        let mut scope = Scope::new();
        scope.push("t", Instant::now());
        assert_eq!(
            write(&scope, &[]),
            Err(("t".to_owned(), "timestamp".to_owned()))
        );
    }

    #[test]
    fn closures_are_not_shared() {
        // Found by the `evaluate` fuzz target: a closure was written by its generated name,
        // which could not be read back, and the session's state was unreadable.
        let engine = Engine::new();
        let mut scope = Scope::new();
        engine
            .run_with_scope(
                &mut scope,
                r#"let y = || || "x"; let z = Fn("f").curry(|| 1);"#,
            )
            .unwrap();
        let refused = write(&scope, &[]).unwrap_err();
        assert_eq!(refused.1, "closure");
    }

    #[test]
    fn replaced_scripts_are_dropped() {
        let mut sources = Vec::new();
        let f = || ("f".to_owned(), 1);
        let g = || ("g".to_owned(), 0);
        add_source(&mut sources, "fn f(a) { a } fn g() { 1 }", vec![f(), g()]);
        add_source(&mut sources, "fn f(a) { 2 }", vec![f()]);
        assert_eq!(sources.len(), 2, "the first still defines g");
        add_source(&mut sources, "fn g() { 3 }", vec![g()]);
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0].code, "fn f(a) { 2 }");
    }
}
