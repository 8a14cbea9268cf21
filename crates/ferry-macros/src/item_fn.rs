//! `#[tool]`, `#[prompt]` and `#[resource]` on a free async function: the function as
//! written, and beside it `{name}_{kind}()`, which returns its registration.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Item, ItemFn};

use crate::attrs::{self, Kind};
use crate::handler::{self, Callee, Place};

/// Expand `#[kind(args)] item`. Mistakes become compile errors on their tokens; the item
/// is kept, and the registration function too (registering nothing), so that code naming
/// either does not add errors of its own.
pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let mut function: ItemFn = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => function,
        Ok(other) => {
            let error = syn::Error::new(
                item_span(&other),
                format!(
                    "#[{}] goes on an `async fn` (or on the methods of an impl block marked \
                     #[ferry::tools])",
                    kind.attr()
                ),
            );
            return with_error(item, error);
        }
        Err(error) => return with_error(item, error),
    };
    let options = attrs::parse(kind, args);
    let krate = options
        .as_ref()
        .map_or_else(|_| quote!(::ferry), attrs::Options::krate);
    let has_receiver = function.sig.receiver().is_some();
    let analyzed = options.and_then(|options| {
        handler::analyze(
            kind,
            options,
            &function.attrs,
            &mut function.sig,
            &Place::Free,
        )
    });
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let register_fn = format_ident!(
        "{}_{}",
        handler::unraw(ident),
        kind.attr(),
        span = ident.span()
    );
    let doc = format!(
        "Registers the {} `{}` on a server: `builder.with({register_fn}())`.",
        kind.attr(),
        handler::unraw(ident)
    );
    let body = match analyzed {
        Ok(h) => {
            let builder = quote!(__ferry_builder);
            let registration = h.register(&builder, &Callee::Free(ident));
            quote!(move |__ferry_builder: #krate::server::ServerBuilder| -> #krate::server::ServerBuilder {
                #registration
            })
        }
        // A method outside a `#[tools]` impl: the function generated beside it would be
        // an associated function of that impl, better left out.
        Err(error) if has_receiver => {
            let error = error.to_compile_error();
            return quote!(#function #error);
        }
        Err(error) => {
            let error = error.to_compile_error();
            quote!({
                #error
                |__ferry_builder: #krate::server::ServerBuilder| __ferry_builder
            })
        }
    };
    quote! {
        #function

        #[doc = #doc]
        #vis fn #register_fn() -> impl #krate::server::Register {
            #body
        }
    }
}

/// The item as it was, followed by the error.
fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#item #error)
}

/// A span for an item that is not a function: its first tokens.
fn item_span(item: &Item) -> proc_macro2::Span {
    match item {
        Item::Struct(s) => s.struct_token.span,
        Item::Enum(e) => e.enum_token.span,
        Item::Impl(i) => i.impl_token.span,
        Item::Const(c) => c.const_token.span,
        Item::Static(s) => s.static_token.span,
        Item::Mod(m) => m.mod_token.span,
        Item::Trait(t) => t.trait_token.span,
        other => other.span(),
    }
}
