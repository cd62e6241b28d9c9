//! The one parameters idiom of the workspace: a plain `*Params` struct with public fields,
//! defaults and `with_*` setters, checked once into a `Valid*` form that the fitting functions
//! take, so a fit never re-validates and never sees unchecked values.
//!
//! [`Params`] is the contract; [`params!`](macro@crate::params) writes the struct, its defaults (or its
//! `new` with the required fields), its setters, the valid newtype, its [`Deref`](std::ops::Deref)
//! to the parameters, and `check`, from one declaration:
//!
//! ```
//! use gimc_linalg::error::{LinalgError, check_nonneg};
//! use gimc_linalg::params::Params;
//!
//! gimc_linalg::params! {
//!     /// How long to iterate.
//!     #[derive(Debug, Clone, Copy, PartialEq)]
//!     pub struct StopParams => ValidStopParams {
//!         /// Relative tolerance. Default 1e-6.
//!         pub tol: f64 = 1e-6 => with_tol,
//!         /// Iteration cap. Default 100.
//!         pub max_iter: usize = 100 => with_max_iter,
//!     }
//!     /// Checks `tol` finite and ≥ 0.
//!     check |this| -> LinalgError {
//!         check_nonneg("tol", this.tol)?;
//!     }
//! }
//!
//! let valid = StopParams::default().with_tol(1e-3).check()?;
//! assert_eq!((valid.tol, valid.max_iter), (1e-3, 100));
//! assert!(StopParams::default().with_tol(f64::NAN).check().is_err());
//! // The trait gives the same check to generic code.
//! fn checked<P: Params>(p: &P) -> Result<P::Valid, P::Error> {
//!     p.check()
//! }
//! assert!(checked(&StopParams::default()).is_ok());
//! # Ok::<(), LinalgError>(())
//! ```
//!
//! Parameters without a sensible default for some field list those fields in a `required`
//! block, after the doc comment of `new`: the macro then writes `new(required…)` (the other
//! fields at their defaults) instead of `Default`. Without required fields
//! the valid form's `Default` is the parameters' defaults. Valid forms that carry
//! more than the parameters (a resolved value, say) write `check` and the valid type by hand
//! and end the declaration with `check(manual) -> ERROR;`.

/// Parameters checked once into a valid form.
pub trait Params {
    /// The checked form the fitting functions take.
    type Valid;
    /// What a failed check returns.
    type Error;
    /// Checks every constraint that does not depend on the data.
    fn check(&self) -> Result<Self::Valid, Self::Error>;
}

/// Declares a parameters struct and its checked form (see the [module docs](mod@crate::params)).
///
/// Each field is `NAME: TYPE = DEFAULT`, optionally `=> SETTER` for a `with_*` setter that
/// assigns it. Fields in a leading `required { … }` block (preceded by the doc comment of `new`)
/// have no default: they become the arguments of `new` (a setter is optional there too), and no
/// `Default` is written. Then either
/// - `check |this| -> ERROR { … }`: the constraints (with `?` on any `Result<_, E>` whose `E`
///   converts into `ERROR`), passing by reaching the end; the macro writes `check`, the valid
///   newtype, its `Deref` (and, without required fields, its `Default`) and the [`Params`]
///   impl; or
/// - `check(manual) -> ERROR;`: `check` and the valid type are written by hand (for a valid
///   form that carries more than the parameters); the macro writes the [`Params`] impl.
///
/// [`Params`]: crate::params::Params
#[macro_export]
macro_rules! params {
    // The declaration's header; its fields go to the `@fields` form that fits them.
    (
        $(#[doc = $doc:literal])*
        #[derive($($derive:ident),* $(,)?)]
        $vis:vis struct $name:ident => $valid:ident { $($fields:tt)* }
        $($check:tt)*
    ) => {
        $crate::params!(@fields [$(#[doc = $doc])* #[derive($($derive),*)]] $vis $name => $valid,
            [$($derive),*], { $($fields)* } $($check)*);
    };
    // Fields after a `required` block: `new(required…)` and no `Default`.
    (@fields $attrs:tt $vis:vis $name:ident => $valid:ident, $derives:tt, {
        $(#[doc = $ndoc:literal])*
        required {
            $(
                $(#[doc = $rdoc:literal])*
                $rvis:vis $rfield:ident : $rty:ty $(=> $rsetter:ident)?
            ),* $(,)?
        }
        $(
            $(#[doc = $fdoc:literal])*
            $fvis:vis $field:ident : $fty:ty = $default:expr $(=> $setter:ident)?
        ),* $(,)?
    } $($check:tt)*) => {
        $crate::params!(@struct $attrs $vis $name,
            [$($(#[doc = $rdoc])* $rvis $rfield: $rty,)* $($(#[doc = $fdoc])* $fvis $field: $fty,)*]);

        impl $name {
            $(#[doc = $ndoc])*
            #[allow(clippy::new_without_default)]
            pub fn new($($rfield: $rty),*) -> Self {
                Self { $($rfield,)* $($field: $default,)* }
            }
        }

        $crate::params!(@setters $name, [$($rfield: $rty $(=> $rsetter)?,)* $($field: $fty $(=> $setter)?,)*]);
        $crate::params!(@check $name, $valid, $derives, [], $($check)*);
    };
    // Fields with defaults only: `Default`.
    (@fields $attrs:tt $vis:vis $name:ident => $valid:ident, $derives:tt, {
        $(
            $(#[doc = $fdoc:literal])*
            $fvis:vis $field:ident : $fty:ty = $default:expr $(=> $setter:ident)?
        ),* $(,)?
    } $($check:tt)*) => {
        $crate::params!(@struct $attrs $vis $name, [$($(#[doc = $fdoc])* $fvis $field: $fty,)*]);

        impl Default for $name {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        $crate::params!(@setters $name, [$($field: $fty $(=> $setter)?,)*]);
        $crate::params!(@check $name, $valid, $derives, [default], $($check)*);
    };
    (@struct [$($attr:tt)*] $vis:vis $name:ident,
        [$($(#[doc = $fdoc:literal])* $fvis:vis $field:ident : $fty:ty,)*]) => {
        $($attr)*
        #[non_exhaustive]
        $vis struct $name {
            $( $(#[doc = $fdoc])* $fvis $field: $fty, )*
        }
    };
    (@setters $name:ident, [$($field:ident : $fty:ty $(=> $setter:ident)?,)*]) => {
        impl $name {
            $($(
                #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
                #[must_use]
                pub fn $setter(mut self, $field: $fty) -> Self {
                    self.$field = $field;
                    self
                }
            )?)*
        }
    };
    (@check $name:ident, $valid:ident, [$($derive:ident),*], [$($default:ident)?],
        check(manual) -> $err:ty;) => {
        $crate::params!(@trait $name, $valid, $err);
    };
    (@check $name:ident, $valid:ident, [$($derive:ident),*], [$($default:ident)?],
        $(#[doc = $cdoc:literal])*
        check |$p:ident| -> $err:ty $check:block) => {
        impl $name {
            $(#[doc = $cdoc])*
            #[doc = ""]
            #[doc = concat!("On success the parameters are wrapped in [`", stringify!($valid), "`].")]
            pub fn check(&self) -> ::std::result::Result<$valid, $err> {
                let $p = self;
                $check
                Ok($valid(::std::clone::Clone::clone($p)))
            }
        }

        #[doc = concat!("[`", stringify!($name), "`] that passed [`", stringify!($name), "::check`]; it dereferences to them.")]
        #[derive($($derive),*)]
        pub struct $valid($name);

        impl ::std::ops::Deref for $valid {
            type Target = $name;
            fn deref(&self) -> &$name {
                &self.0
            }
        }

        $(
            $crate::params!(@$default $name, $valid);
        )?
        $crate::params!(@trait $name, $valid, $err);
    };
    (@default $name:ident, $valid:ident) => {
        #[doc = concat!("The defaults of [`", stringify!($name), "`], which pass its check (asserted in debug builds).")]
        impl Default for $valid {
            fn default() -> Self {
                let defaults = <$name as Default>::default();
                debug_assert!(defaults.check().is_ok(), "the defaults must pass the check");
                $valid(defaults)
            }
        }
    };
    (@trait $name:ident, $valid:ident, $err:ty) => {
        impl $crate::params::Params for $name {
            type Valid = $valid;
            type Error = $err;
            fn check(&self) -> ::std::result::Result<$valid, $err> {
                $name::check(self)
            }
        }
    };
}
