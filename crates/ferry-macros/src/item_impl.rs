//! `#[tools]` (alias `#[server]`) on an impl block: its methods marked `#[tool]`,
//! `#[prompt]` or `#[resource(..)]` registered with one `Arc` of the value they share.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, Item, ItemImpl, Meta};

use crate::attrs::{self, Kind};
use crate::handler::{self, Callee, Errors, Handler, Place};

/// Expand `#[tools(args)] impl Type { .. }`: the impl block without the marker
/// attributes, then `RegisterShared` (the registrations) and `Register` (through a new
/// `Arc`) for the type. With mistakes, their errors and the two impls registering
/// nothing, so that `.with(value)` adds no error of its own.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut block: ItemImpl = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Impl(block)) => block,
        Ok(other) => {
            let error = syn::Error::new(
                other.span(),
                "#[tools] goes on an impl block whose methods are marked #[tool], #[prompt] \
                 or #[resource]",
            )
            .to_compile_error();
            return quote!(#item #error);
        }
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#item #error);
        }
    };
    let mut errors = Errors::default();
    let krate = match attrs::parse_impl(args) {
        Ok(Some(path)) => path.to_token_stream(),
        Ok(None) => quote!(::ferry),
        Err(e) => {
            errors.push(e);
            quote!(::ferry)
        }
    };
    if let Some((_, path, _)) = &block.trait_ {
        errors.at(
            path.span(),
            "#[tools] goes on an inherent impl block (`impl Type { .. }`), not a trait impl",
        );
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        errors.at(
            block.generics.span(),
            "#[tools] cannot register a generic impl block: each tool's schema is one type",
        );
    }
    if !errors.is_empty() {
        // Not an impl the macro can register: no `Register` impls either, which would
        // only add errors (a second `#[tools]` block of the type, say).
        let errors = errors.finish().err().map(|e| e.to_compile_error());
        return quote!(#block #errors);
    }
    let self_ty = (*block.self_ty).clone();
    let mut handlers: Vec<Handler> = Vec::new();
    for member in &mut block.items {
        let ImplItem::Fn(method) = member else {
            continue;
        };
        let mut marked = Vec::new();
        method
            .attrs
            .retain(|attr| match Kind::of_attr(attr.path()) {
                Some(kind) => {
                    marked.push((kind, attr.clone()));
                    false
                }
                None => true,
            });
        let mut marks = marked.into_iter();
        let Some((kind, attr)) = marks.next() else {
            continue;
        };
        if let Some((_, second)) = marks.next() {
            errors.at(
                second.span(),
                "a method is one tool, prompt or resource: one of #[tool], #[prompt], \
                 #[resource]",
            );
            continue;
        }
        let tokens = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(nv) => {
                errors.at(
                    nv.eq_token.span,
                    format!("write #[{}(..)], not #[{} = ..]", kind.attr(), kind.attr()),
                );
                continue;
            }
        };
        let analyzed = attrs::parse(kind, tokens).and_then(|mut options| {
            if options.krate.is_none() {
                options.krate = syn::parse2(krate.clone()).ok();
            }
            handler::analyze(
                kind,
                options,
                &method.attrs,
                &mut method.sig,
                &Place::Impl(&self_ty),
            )
        });
        match analyzed {
            Ok(h) => handlers.push(h),
            Err(e) => errors.push(e),
        }
    }
    if handlers.is_empty() && errors.is_empty() {
        errors.at(
            block.impl_token.span,
            "#[tools] found no method marked #[tool], #[prompt] or #[resource] in this impl",
        );
    }
    for (i, h) in handlers.iter().enumerate() {
        let key = |h: &Handler| match h.kind {
            Kind::Resource => (h.kind, h.uri()),
            _ => (h.kind, h.name()),
        };
        if handlers[..i].iter().any(|earlier| key(earlier) == key(h)) {
            errors.at(
                h.name_span(),
                format!(
                    "a second {} {:?} in this impl block: names (URIs for resources) must differ",
                    h.kind.attr(),
                    key(h).1
                ),
            );
        }
    }
    let builder = quote!(builder);
    let registrations: Vec<TokenStream> = match errors.finish() {
        Ok(()) => handlers
            .iter()
            .map(|h| {
                let registration = h.register(&builder, &Callee::Method);
                quote!(let builder = #registration;)
            })
            .collect(),
        Err(e) => vec![e.to_compile_error()],
    };
    let server = quote!(#krate::server);
    quote! {
        #block

        impl #server::RegisterShared for #self_ty {
            fn register_shared(
                self: ::std::sync::Arc<Self>,
                builder: #server::ServerBuilder,
            ) -> #server::ServerBuilder {
                #(#registrations)*
                builder
            }
        }

        impl #server::Register for #self_ty {
            fn register(self, builder: #server::ServerBuilder) -> #server::ServerBuilder {
                #server::RegisterShared::register_shared(::std::sync::Arc::new(self), builder)
            }
        }
    }
}
