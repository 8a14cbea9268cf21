//! One handler (a tool, a prompt or a resource function): its parameters sorted into
//! arguments and injected extractors, and the builder call that registers it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, LitStr, Pat, PathArguments, ReturnType, Signature,
    Type, TypePath,
};

use crate::attrs::{Kind, Options, TaskSupport};
use crate::docs;

/// The most injected parameters a handler takes (the builder's `HandlerFn` and
/// `ReadHandler` are implemented up to five extractors).
const MAX_INJECTED: usize = 5;

/// The last path segments of the types injected without `#[inject]`: the extractors
/// `ferry::server` defines (and `Auth` of `ferry::http::auth`).
const EXTRACTORS: &[&str] = &[
    "Context",
    "ToolContext",
    "State",
    "Progress",
    "Cancel",
    "Peer",
    "Meta",
    "ClientCaps",
    "SessionData",
    "Auth",
];

/// The attributes on parameters that the macros read and remove.
const MARKERS: &[&str] = &["args", "arg", "inject", "uri"];

/// Where the function is: alone in a module, or a method of a `#[tools]` impl block.
pub(crate) enum Place<'a> {
    Free,
    Impl(&'a Type),
}

/// How a method takes the shared value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// No `self`: a free function, or an associated function of the impl block.
    None,
    /// `&self`: borrowed from the `Arc` each call holds.
    Ref,
    /// `self: Arc<Self>`: a clone of the `Arc`.
    Arc,
}

/// What a parameter is to the handler.
enum Role {
    /// A field of the generated arguments struct (named like the parameter), with the
    /// attributes that go on that field (docs, `#[serde]`, `#[schemars]`).
    Argument(Ident, Vec<Attribute>),
    /// `#[args]`: the whole arguments object.
    Args,
    /// An extractor, taken from the request's context.
    Inject,
    /// A resource template's variable (named like the parameter); `Some(T)` for an
    /// `Option<T>` parameter, which an undefined variable leaves `None`.
    Var(String, Option<Type>),
    /// `#[uri]`: the URI being read.
    Uri,
}

struct Param {
    role: Role,
    ty: Type,
    /// The parameter as written (`name: Type`), for messages about it.
    tokens: TokenStream,
}

/// A function marked `#[tool]`, `#[prompt]` or `#[resource]`, read and checked.
pub(crate) struct Handler {
    pub(crate) kind: Kind,
    pub(crate) options: Options,
    pub(crate) ident: Ident,
    pub(crate) receiver: Receiver,
    params: Vec<Param>,
    description: Option<TokenStream>,
    /// Whether the URI is a template (a resource with variables).
    template: bool,
    /// The return type (the name when there is none), where output errors are reported.
    output_span: Span,
}

/// Errors gathered while reading a function, so that all of them are reported at once.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// An error marking all of `tokens`, first to last (on stable Rust a `Span` cannot be
    /// joined, so `at` marks one token).
    pub(crate) fn on(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

impl Handler {
    /// The name the handler is registered under: `name = ..`, else the function's.
    pub(crate) fn name(&self) -> String {
        match &self.options.name {
            Some(name) => name.value(),
            None => unraw(&self.ident),
        }
    }

    /// The token to point at when two handlers share a name.
    pub(crate) fn name_span(&self) -> Span {
        match (&self.options.name, &self.options.uri) {
            (Some(name), _) if self.kind != Kind::Resource => name.span(),
            (_, Some(uri)) if self.kind == Kind::Resource => uri.span(),
            _ => self.ident.span(),
        }
    }

    /// The resource's URI (or URI template); empty for tools and prompts.
    pub(crate) fn uri(&self) -> String {
        self.options
            .uri
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_default()
    }
}

/// An identifier as written, without `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// Read `sig` (with the function's attributes `attrs`) as a handler of `kind`, removing
/// the attributes of its parameters that the macro consumes (`#[args]`, `#[inject]`,
/// `#[arg]`, `#[uri]`, docs, `#[serde]`, `#[schemars]`) so that the function compiles as
/// written. Every mistake found is reported, each on its own token.
pub(crate) fn analyze(
    kind: Kind,
    options: Options,
    attrs: &[Attribute],
    sig: &mut Signature,
    place: &Place<'_>,
) -> syn::Result<Handler> {
    let mut errors = Errors::default();
    let what = kind.attr();

    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token.span,
            format!(
                "a #[{what}] function must be `async`: write `async fn {}`",
                sig.ident
            ),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.at(
            constness.span,
            format!("a #[{what}] function cannot be `const`"),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.at(
            unsafety.span,
            format!("a #[{what}] function cannot be `unsafe`"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.on(abi, format!("a #[{what}] function cannot have an ABI"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.on(
            &sig.generics,
            format!(
                "a #[{what}] function cannot be generic: its arguments and schema are one type"
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.on(variadic, format!("a #[{what}] function cannot be variadic"));
    }

    let template = match kind {
        Kind::Resource => match &options.uri {
            Some(uri) => match crate::uri::variables(uri) {
                Ok(vars) => vars,
                Err(e) => {
                    errors.push(e);
                    None
                }
            },
            None => {
                errors.at(
                    sig.ident.span(),
                    "#[resource] needs the resource's URI: #[resource(\"scheme://path\")] \
                     (with `{variables}` for a template)",
                );
                None
            }
        },
        _ => None,
    };
    if kind == Kind::Resource
        && template.is_some()
        && let Some(size) = &options.size
    {
        errors.at(
            size.span(),
            "`size` is for a static resource, not a template",
        );
    }

    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    for input in &mut sig.inputs {
        match input {
            FnArg::Receiver(r) => match place {
                Place::Free => errors.at(
                    r.self_token.span,
                    format!(
                        "a #[{what}] method needs #[ferry::tools] on its impl block (which \
                         registers the value's handlers with a shared `Arc<Self>`)"
                    ),
                ),
                Place::Impl(_) => match receiver_kind(r) {
                    Ok(kind) => receiver = kind,
                    Err(e) => errors.push(e),
                },
            },
            FnArg::Typed(typed) => {
                match param(kind, typed, template.as_deref(), &mut errors) {
                    Some(mut p) => {
                        if let (Place::Impl(self_ty), Role::Argument(..)) = (place, &p.role) {
                            // The arguments struct is an item inside a function: `Self`
                            // does not reach it.
                            ReplaceSelf(self_ty).visit_type_mut(&mut p.ty);
                        }
                        params.push(p);
                    }
                    None => continue,
                }
            }
        }
    }

    let injected: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.role, Role::Inject))
        .collect();
    if injected.len() > MAX_INJECTED {
        errors.on(
            &injected[MAX_INJECTED].ty,
            format!(
                "a handler takes at most {MAX_INJECTED} injected parameters (extractors); \
                 take `Context` and reach the rest through it"
            ),
        );
    }
    let whole = params
        .iter()
        .filter(|p| matches!(p.role, Role::Args))
        .count();
    let plain = params
        .iter()
        .filter(|p| matches!(p.role, Role::Argument(..)))
        .count();
    if whole > 1 || (whole == 1 && plain > 0) {
        let second = params
            .iter()
            .filter(|p| matches!(p.role, Role::Args | Role::Argument(..)))
            .nth(1)
            .map(|p| p.tokens.clone());
        errors.on(
            second,
            format!(
                "a #[{what}] takes either one `#[args]` parameter (the whole arguments \
                 object) or plain argument parameters, not both"
            ),
        );
    }

    let description = match &options.description {
        Some(text) => Some(quote!(#text)),
        None => docs::description(attrs),
    };
    errors.finish()?;
    Ok(Handler {
        kind,
        options,
        ident: sig.ident.clone(),
        receiver,
        params,
        description,
        template: template.is_some(),
        output_span: match &sig.output {
            ReturnType::Default => sig.ident.span(),
            ReturnType::Type(_, ty) => ty.span(),
        },
    })
}

/// `&self` or `self: Arc<Self>`; a mistake otherwise.
fn receiver_kind(r: &syn::Receiver) -> syn::Result<Receiver> {
    let is_arc = |ty: &Type| matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Arc"));
    if r.colon_token.is_some() {
        if is_arc(&r.ty) {
            return Ok(Receiver::Arc);
        }
        return Err(syn::Error::new_spanned(
            &r.ty,
            "a handler method takes `&self` or `self: Arc<Self>`",
        ));
    }
    match (&r.reference, &r.mutability) {
        (Some(_), None) => Ok(Receiver::Ref),
        (Some(_), Some(_)) => Err(syn::Error::new_spanned(
            r,
            "a handler method cannot take `&mut self`: the handlers share one value and run \
             concurrently; take `&self` and keep what changes behind a lock or an atomic",
        )),
        (None, _) => Err(syn::Error::new(
            r.self_token.span,
            "a handler method cannot take `self` by value: the handlers share one value \
             (behind an `Arc`); take `&self`",
        )),
    }
}

/// Read one parameter and strip the attributes the macro consumes; `None` (with the
/// mistake reported) when it cannot be used.
fn param(
    kind: Kind,
    typed: &mut syn::PatType,
    template: Option<&[String]>,
    errors: &mut Errors,
) -> Option<Param> {
    let mut marker: Option<Ident> = None;
    let mut field_attrs = Vec::new();
    let mut failed = false;
    let mut kept = Vec::new();
    for attr in std::mem::take(&mut typed.attrs) {
        let path = attr.path();
        if let Some(ident) = path.get_ident().filter(|i| MARKERS.iter().any(|m| *i == m)) {
            if let Err(e) = attr.meta.require_path_only() {
                errors.push(e);
                failed = true;
            } else if let Some(first) = &marker {
                errors.at(
                    ident.span(),
                    format!("`#[{ident}]` with `#[{first}]`: a parameter has one role"),
                );
                failed = true;
            } else {
                marker = Some(ident.clone());
            }
        } else if docs::is_doc(&attr) || path.is_ident("serde") || path.is_ident("schemars") {
            field_attrs.push(attr);
        } else {
            kept.push(attr);
        }
    }
    typed.attrs = kept;
    if failed {
        return None;
    }
    let ty = (*typed.ty).clone();
    let name = match &*typed.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
        _ => None,
    };
    let marker_name = marker.as_ref().map(Ident::to_string);
    let role = match marker_name.as_deref() {
        Some("args") if kind == Kind::Resource => {
            return misplaced(errors, marker.as_ref(), "#[args] is for tools and prompts");
        }
        Some("args") => Role::Args,
        Some("inject") => Role::Inject,
        Some("uri") if kind != Kind::Resource => {
            return misplaced(errors, marker.as_ref(), "#[uri] is for resources");
        }
        Some("uri") => Role::Uri,
        Some("arg") if kind == Kind::Resource => {
            return misplaced(
                errors,
                marker.as_ref(),
                "#[arg] is for tools and prompts (a resource's parameters are its \
                 template's variables)",
            );
        }
        Some(_) => argument(kind, name.as_ref(), typed, &mut field_attrs, errors)?,
        None if is_extractor(&ty) => Role::Inject,
        None if kind == Kind::Resource => {
            let var = name
                .as_ref()
                .map(unraw)
                .filter(|n| template.is_some_and(|vars| vars.iter().any(|v| v == n)));
            match var {
                Some(var) => Role::Var(var, option_inner(&ty)),
                None => {
                    let vars = match template {
                        Some(vars) => format!("its template's variables ({})", vars.join(", ")),
                        None => "no variables (its URI is not a template)".to_owned(),
                    };
                    errors.on(
                        &*typed,
                        format!(
                            "this parameter is neither a variable of the resource's URI nor \
                             an extractor: the resource has {vars}; extractors are Context, \
                             State<T>, Cancel, Peer, Meta, ClientCaps, SessionData, Auth or a type marked \
                             #[inject]; #[uri] gives the URI read"
                        ),
                    );
                    return None;
                }
            }
        }
        None => argument(kind, name.as_ref(), typed, &mut field_attrs, errors)?,
    };
    if !matches!(role, Role::Argument(..)) {
        if let Some(attr) = field_attrs.iter().find(|a| !docs::is_doc(a)) {
            errors.on(
                attr,
                "#[serde] and #[schemars] go on argument parameters only",
            );
            return None;
        }
        if matches!(role, Role::Inject) && matches!(ty, Type::Reference(_)) {
            errors.on(
                &ty,
                "an extractor is taken by value (`Context`, not `&Context`)",
            );
            return None;
        }
    }
    Some(Param {
        role,
        ty,
        tokens: typed.to_token_stream(),
    })
}

fn misplaced(errors: &mut Errors, marker: Option<&Ident>, message: &str) -> Option<Param> {
    errors.at(marker.map_or_else(Span::call_site, Ident::span), message);
    None
}

/// A parameter that becomes a field of the arguments struct: a plain name and an owned
/// type (the arguments are deserialized).
fn argument(
    kind: Kind,
    name: Option<&Ident>,
    typed: &syn::PatType,
    field_attrs: &mut Vec<Attribute>,
    errors: &mut Errors,
) -> Option<Role> {
    let Some(name) = name else {
        errors.on(
            &typed.pat,
            format!(
                "an argument of a #[{}] is named by a plain identifier: it is the argument's \
                 name in the schema (or mark the parameter #[inject] if it is an extractor)",
                kind.attr()
            ),
        );
        return None;
    };
    match &*typed.ty {
        Type::Reference(r) => {
            errors.on(
                r,
                "arguments are deserialized into owned values: take `String` rather than \
                 `&str`, `Vec<T>` rather than `&[T]` (or mark an extractor #[inject])",
            );
            return None;
        }
        Type::ImplTrait(t) => {
            errors.on(
                t,
                "arguments are deserialized: take a concrete type, not `impl Trait`",
            );
            return None;
        }
        _ => {}
    }
    Some(Role::Argument(name.clone(), std::mem::take(field_attrs)))
}

/// Whether `ty`'s last path segment names one of Ferry's extractors (or `Option<Auth>`).
fn is_extractor(ty: &Type) -> bool {
    match ty {
        Type::Group(g) => is_extractor(&g.elem),
        Type::Paren(p) => is_extractor(&p.elem),
        Type::Path(TypePath { qself: None, path }) => {
            let Some(last) = path.segments.last() else {
                return false;
            };
            if EXTRACTORS.iter().any(|e| last.ident == e) {
                return true;
            }
            last.ident == "Option"
                && option_inner(ty).is_some_and(|inner| {
                    matches!(&inner, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Auth"))
                })
        }
        _ => false,
    }
}

/// `T` of a type written `Option<T>`.
fn option_inner(ty: &Type) -> Option<Type> {
    let Type::Path(TypePath { qself: None, path }) = ty else {
        return None;
    };
    let last = path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner.clone()),
        _ => None,
    }
}

/// Writes the impl block's type where a type says `Self`.
struct ReplaceSelf<'a>(&'a Type);

impl VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(TypePath { qself: None, path }) = ty
            && path.segments.first().is_some_and(|s| s.ident == "Self")
        {
            if path.segments.len() == 1 {
                *ty = self.0.clone();
                return;
            }
            // `Self::Assoc` -> `<Type>::Assoc`.
            let rest: Vec<_> = path.segments.iter().skip(1).cloned().collect();
            let self_ty = self.0;
            *ty = syn::parse_quote!(<#self_ty>::#(#rest)::*);
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// How the generated code reaches the function.
pub(crate) enum Callee<'a> {
    /// A free function, by name.
    Free(&'a Ident),
    /// A method or associated function of the impl block (`Self::name`), the shared value
    /// being `self: Arc<Self>` of the registering function.
    Method,
}

impl Handler {
    /// An expression of type `ServerBuilder`: `builder` with this handler registered.
    pub(crate) fn register(&self, builder: &TokenStream, callee: &Callee<'_>) -> TokenStream {
        let krate = self.options.krate();
        let name = LitStr::new(&self.name(), self.ident.span());
        let description = self
            .description
            .as_ref()
            .map(|d| quote!(::core::option::Option::Some(::std::string::String::from(#d))));
        let title = self
            .options
            .title
            .as_ref()
            .map(|t| quote!(::core::option::Option::Some(::std::string::String::from(#t))));
        let icons = self.icons(&krate);
        let args_struct = self.args_struct(&krate);
        let handler = self.closure(&krate, callee);
        let types = quote!(#krate::protocol::types);
        let set = |field: &str, value: Option<TokenStream>| {
            let field = format_ident!("{}", field);
            value.map(|v| quote!(__ferry_item.#field = #v;))
        };
        let common = [
            set("title", title),
            set("description", description),
            set("icons", icons),
        ];
        // `visible = predicate`: the builder's rule for the item, spanned at the predicate
        // so a wrong type is reported there.
        let visible = |method: &str, key: &LitStr| {
            self.options.visible.as_ref().map(|predicate| {
                let method = format_ident!("{}", method);
                quote_spanned!(predicate.span()=> .#method(#key, #predicate))
            })
        };
        match self.kind {
            Kind::Tool => {
                let annotations = self.annotations(&types);
                let execution = self.options.task_support.map(|support| {
                    let variant = match support {
                        TaskSupport::Forbidden => quote!(Forbidden),
                        TaskSupport::Optional => quote!(Optional),
                        TaskSupport::Required => quote!(Required),
                    };
                    quote!({
                        let mut execution =
                            <#types::ToolExecution as ::core::default::Default>::default();
                        execution.task_support =
                            ::core::option::Option::Some(#types::TaskSupport::#variant);
                        ::core::option::Option::Some(execution)
                    })
                });
                let annotations = set("annotations", annotations);
                let execution = set("execution", execution);
                let visible = visible("tool_visible_if", &name);
                quote!({
                    #args_struct
                    let mut __ferry_item = <#types::Tool as ::core::default::Default>::default();
                    __ferry_item.name = ::std::string::String::from(#name);
                    #(#common)*
                    #annotations
                    #execution
                    #builder.tool_with(__ferry_item, #handler)#visible
                })
            }
            Kind::Prompt => {
                let visible = visible("prompt_visible_if", &name);
                quote!({
                    #args_struct
                    let mut __ferry_item =
                        <#types::Prompt as ::core::default::Default>::default();
                    __ferry_item.name = ::std::string::String::from(#name);
                    #(#common)*
                    #builder.prompt_with(__ferry_item, #handler)#visible
                })
            }
            Kind::Resource => {
                let uri = &self.options.uri;
                let mime_type = set(
                    "mime_type",
                    self.options.mime_type.as_ref().map(
                        |m| quote!(::core::option::Option::Some(::std::string::String::from(#m))),
                    ),
                );
                let visible = uri.as_ref().and_then(|uri| {
                    let method = if self.template {
                        "template_visible_if"
                    } else {
                        "resource_visible_if"
                    };
                    visible(method, uri)
                });
                if self.template {
                    quote!({
                        let mut __ferry_item =
                            <#types::ResourceTemplate as ::core::default::Default>::default();
                        __ferry_item.uri_template = ::std::string::String::from(#uri);
                        __ferry_item.name = ::std::string::String::from(#name);
                        #(#common)*
                        #mime_type
                        #builder.resource_template(__ferry_item, #handler)#visible
                    })
                } else {
                    let size = set(
                        "size",
                        self.options
                            .size
                            .as_ref()
                            .map(|s| quote!(::core::option::Option::Some(#s))),
                    );
                    quote!({
                        let mut __ferry_item =
                            <#types::Resource as ::core::default::Default>::default();
                        __ferry_item.uri = ::std::string::String::from(#uri);
                        __ferry_item.name = ::std::string::String::from(#name);
                        #(#common)*
                        #mime_type
                        #size
                        #builder.resource(__ferry_item, #handler)#visible
                    })
                }
            }
        }
    }

    /// `Some(ToolAnnotations)` when a hint was given.
    fn annotations(&self, types: &TokenStream) -> Option<TokenStream> {
        if !self.options.has_hints() {
            return None;
        }
        let hint = |field: &str, value: &Option<syn::LitBool>| {
            let field = format_ident!("{}", field);
            value
                .as_ref()
                .map(|v| quote!(annotations.#field = ::core::option::Option::Some(#v);))
        };
        let o = &self.options;
        let hints = [
            hint("read_only_hint", &o.read_only),
            hint("destructive_hint", &o.destructive),
            hint("idempotent_hint", &o.idempotent),
            hint("open_world_hint", &o.open_world),
        ];
        Some(quote!({
            let mut annotations =
                <#types::ToolAnnotations as ::core::default::Default>::default();
            #(#hints)*
            ::core::option::Option::Some(annotations)
        }))
    }

    /// `Some(vec![Icon..])` when icons were given.
    fn icons(&self, krate: &TokenStream) -> Option<TokenStream> {
        if self.options.icons.is_empty() {
            return None;
        }
        let types = quote!(#krate::protocol::types);
        let icons = self.options.icons.iter().map(|icon| {
            let src = &icon.src;
            let mime_type = icon.mime_type.as_ref().map(|m| {
                quote!(icon.mime_type =
                    ::core::option::Option::Some(::std::string::String::from(#m));)
            });
            let sizes = (!icon.sizes.is_empty()).then(|| {
                let sizes = &icon.sizes;
                quote!(icon.sizes = ::core::option::Option::Some(
                    ::std::vec![#(::std::string::String::from(#sizes)),*]
                );)
            });
            let theme = icon.dark.map(|dark| {
                let variant = if dark { quote!(Dark) } else { quote!(Light) };
                quote!(icon.theme = ::core::option::Option::Some(#types::IconTheme::#variant);)
            });
            quote!({
                let mut icon = <#types::Icon as ::core::default::Default>::default();
                icon.src = ::std::string::String::from(#src);
                #mime_type
                #sizes
                #theme
                icon
            })
        });
        Some(quote!(::core::option::Option::Some(
            ::std::vec![#(#icons),*]
        )))
    }

    /// The struct of the plain argument parameters, named `{Function}Args` in the schema
    /// (its `title`) and in serde's messages, as a hand-written struct would be.
    fn args_struct(&self, krate: &TokenStream) -> Option<TokenStream> {
        let fields: Vec<TokenStream> = self
            .params
            .iter()
            .filter_map(|p| match &p.role {
                Role::Argument(name, attrs) => {
                    let ty = &p.ty;
                    Some(quote!(#(#attrs)* #name: #ty))
                }
                _ => None,
            })
            .collect();
        if fields.is_empty() {
            return None;
        }
        let title = LitStr::new(
            &format!("{}Args", pascal_case(&unraw(&self.ident))),
            self.ident.span(),
        );
        let serde_path = LitStr::new(
            &format!("{}::__private::serde", krate.to_string().replace(' ', "")),
            Span::call_site(),
        );
        let schemars_path = LitStr::new(
            &format!(
                "{}::__private::schemars",
                krate.to_string().replace(' ', "")
            ),
            Span::call_site(),
        );
        Some(quote! {
            #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_path, rename = #title)]
            #[schemars(crate = #schemars_path)]
            struct __FerryArgs {
                #(#fields,)*
            }
        })
    }

    /// The handler given to the builder: a closure taking the arguments (when there are
    /// any), the URI and template variables (a resource that reads them), and the
    /// injected parameters, calling the function with them in its own order.
    fn closure(&self, krate: &TokenStream, callee: &Callee<'_>) -> TokenStream {
        let mut inputs = Vec::new();
        let mut call_args = Vec::new();
        let mut lets = Vec::new();
        let args_ty = self.params.iter().find_map(|p| match p.role {
            Role::Args => Some(p.ty.clone()),
            Role::Argument(..) => Some(syn::parse_quote!(__FerryArgs)),
            _ => None,
        });
        match args_ty {
            Some(ty) => inputs.push(quote!(__ferry_args: #ty)),
            // No arguments: `()`, the builder's type for "none" (an object schema without
            // properties), named so that a first injected parameter is never taken for
            // the arguments.
            None if self.kind != Kind::Resource => inputs.push(quote!(_: ())),
            None => {}
        }
        let reads_uri = self
            .params
            .iter()
            .any(|p| matches!(p.role, Role::Var(..) | Role::Uri));
        if reads_uri {
            let vars_used = self.params.iter().any(|p| matches!(p.role, Role::Var(..)));
            let vars = if vars_used {
                quote!(__ferry_vars)
            } else {
                quote!(_)
            };
            inputs.push(quote!(__ferry_uri: ::std::string::String));
            inputs.push(quote!(#vars: #krate::server::TemplateVars));
        }
        let mut injected = 0usize;
        for (i, p) in self.params.iter().enumerate() {
            let ty = &p.ty;
            match &p.role {
                Role::Argument(name, _) => call_args.push(quote!(__ferry_args.#name)),
                Role::Args => call_args.push(quote!(__ferry_args)),
                Role::Inject => {
                    let ident = format_ident!("__ferry_x{}", injected);
                    injected += 1;
                    let ty = quote_spanned!(ty.span()=> <#ty as #krate::__private::Injected>::Type);
                    inputs.push(quote!(#ident: #ty));
                    call_args.push(quote!(#ident));
                }
                Role::Var(name, optional) => {
                    let ident = format_ident!("__ferry_v{}", i);
                    let (function, parsed) = match optional {
                        Some(inner) => (quote!(template_var_opt), inner),
                        None => (quote!(template_var), ty),
                    };
                    lets.push(quote_spanned! {ty.span()=>
                        let #ident = match #krate::__private::#function::<#parsed>(
                            &__ferry_vars, #name, &__ferry_uri,
                        ) {
                            ::core::result::Result::Ok(value) => value,
                            ::core::result::Result::Err(error) => {
                                return ::core::result::Result::Err(error);
                            }
                        };
                    });
                    call_args.push(quote!(#ident));
                }
                Role::Uri => {
                    call_args.push(quote!(::std::clone::Clone::clone(&__ferry_uri)));
                }
            }
        }
        let ident = &self.ident;
        let (path, this) = match callee {
            Callee::Free(name) => (quote!(#name), None),
            Callee::Method => (
                quote!(Self::#ident),
                match self.receiver {
                    Receiver::None => None,
                    Receiver::Ref => Some(quote!(&__ferry_this)),
                    Receiver::Arc => Some(quote!(::std::sync::Arc::clone(&__ferry_this))),
                },
            ),
        };
        let this_arg = this.map(|t| quote!(#t,));
        let call = quote!(#path(#this_arg #(#call_args),*));
        // A future that borrows the shared value (`&self`) or reads template variables
        // first is made in an `async move` block owning what it needs; otherwise the
        // function's own future is the handler's.
        let needs_block = self.receiver == Receiver::Ref || !lets.is_empty();
        // A variable that does not parse is answered before the function runs: the
        // block's output is then a `Result` of the function's, which the builder turns
        // into contents the same way (`IntoReadResult` for `Result<T, ResourceError>`).
        let output = if lets.is_empty() {
            quote!(#call.await)
        } else {
            quote!(::core::result::Result::<_, #krate::server::ResourceError>::Ok(#call.await))
        };
        let body = if needs_block {
            let clone_this = (self.receiver != Receiver::None)
                .then(|| quote!(let __ferry_this = ::std::sync::Arc::clone(&__ferry_this);));
            quote!({
                #clone_this
                async move {
                    #(#lets)*
                    #output
                }
            })
        } else {
            call
        };
        let closure = quote!(move |#(#inputs),*| #body);
        let closure = if self.receiver == Receiver::None {
            closure
        } else {
            quote!({
                let __ferry_this = ::std::sync::Arc::clone(&self);
                #closure
            })
        };
        // The braces carry the span of the function's return type: a bound the builder
        // puts on the handler's output (`IntoToolResult`, `IntoPromptResult`,
        // `IntoReadResult`) is then reported on that type, not on the macro.
        quote_spanned!(self.output_span=> {
            let handler = #closure;
            handler
        })
    }
}

/// `get_weather` -> `GetWeather`.
fn pascal_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}
