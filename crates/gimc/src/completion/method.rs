//! The completion methods by name: the solvers' methods (MC-ALS, IMC by ALS + CG, nuclear-norm
//! MC / IMC by FPC, PU-IMC, bilinear regression) and GIMC with a registry's map family on both
//! sides.

use gimc_solvers::Side;

use crate::error::{GimcError, Result, param_err};
use crate::registry::MapRegistry;

/// A completion method of [`complete`](crate::complete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionMethod {
    /// Low-rank MC by ALS (`mc-als`; no features).
    McAls,
    /// IMC by ALS + CG (`imc`; features on either side, an identity side is plain MC there).
    Imc,
    /// Nuclear-norm MC by FPC (`mc-nuclear`; no features; λ is the nuclear-norm weight μ, the
    /// rank unused).
    McNuclear,
    /// Nuclear-norm IMC by FPC (`imc-nuclear`; features on at least one side).
    ImcNuclear,
    /// PU (biased) IMC (`pu-imc`): Ω holds the positives, every other entry is an unlabelled 0
    /// weighted 1 − α with α = (1 + ρ)/2, ρ from the grid
    /// [`CompletionSelectionParams::rhos`](crate::CompletionSelectionParams::rhos).
    PuImc,
    /// Bilinear regression (`bilinear`, DESIGN §3.2): Z = argmin_{rank Z ≤ k} ‖Φ Z Ψᵀ − T‖²_F
    /// over every entry, T zero outside Ω (a fully observed matrix, or one whose unobserved
    /// entries are 0, such as a label matrix), in closed form from the thin SVDs of Φ and Ψ;
    /// features on both sides, λ unused.
    Bilinear,
    /// GIMC (Algorithm 1) with maps of the registry family `family` on both sides, learned
    /// (`gimc-NAME`) or kept at their random draw (`imc-NAME`; `imc-rff` and `imc-nys` are the
    /// paper's names of `imc-lff` and `imc-lnys`). Both sides need features.
    Maps {
        /// The family's registry name (`lff`, `lnys`, or a user's).
        family: String,
        /// Whether the maps are learned.
        learn: bool,
    },
}

impl CompletionMethod {
    /// The solvers' method names, in the order error messages list them.
    const SOLVERS: [(&'static str, CompletionMethod); 6] = [
        ("mc-als", CompletionMethod::McAls),
        ("imc", CompletionMethod::Imc),
        ("mc-nuclear", CompletionMethod::McNuclear),
        ("imc-nuclear", CompletionMethod::ImcNuclear),
        ("pu-imc", CompletionMethod::PuImc),
        ("bilinear", CompletionMethod::Bilinear),
    ];

    /// The method called `name`: a solver's name, or a map method `gimc-NAME` / `imc-NAME` of
    /// a family in `registry` ([`MapRegistry::map_method`]).
    pub fn parse(name: &str, registry: &MapRegistry) -> Result<Self> {
        if let Some((_, m)) = Self::SOLVERS.iter().find(|(n, _)| *n == name) {
            return Ok(m.clone());
        }
        let (family, learn) = registry.map_method(name).map_err(|_| {
            let solvers: Vec<&str> = Self::SOLVERS.iter().map(|(n, _)| *n).collect();
            GimcError::UnknownMethod {
                name: name.to_string(),
                choices: format!(
                    "{}, or a map method: {}",
                    solvers.join(", "),
                    registry.map_method_names().join(", ")
                ),
            }
        })?;
        Ok(Self::Maps {
            family: family.name().to_string(),
            learn,
        })
    }

    /// The method's name (the one [`parse`](Self::parse) reads).
    pub fn name(&self) -> String {
        match self {
            Self::Maps { family, learn } => {
                format!("{}-{family}", if *learn { "gimc" } else { "imc" })
            }
            m => Self::SOLVERS
                .iter()
                .find(|(_, s)| s == m)
                .map_or_else(String::new, |(n, _)| (*n).to_string()),
        }
    }

    /// Checks the method against the sides: the MC methods take no features, nuclear-norm IMC
    /// needs some, bilinear regression and the map methods need both.
    pub fn check_sides(&self, phi: Side<'_>, psi: Side<'_>) -> Result<()> {
        let (rows, cols) = (
            !matches!(phi, Side::Identity(_)),
            !matches!(psi, Side::Identity(_)),
        );
        match self {
            Self::McAls | Self::McNuclear if rows || cols => Err(param_err(
                "method",
                format!(
                    "{} takes no features; use {}",
                    self.name(),
                    if *self == Self::McAls {
                        "imc"
                    } else {
                        "imc-nuclear"
                    }
                ),
            )),
            Self::ImcNuclear if !(rows || cols) => Err(param_err(
                "method",
                "imc-nuclear needs row and/or column features",
            )),
            Self::Maps { .. } | Self::Bilinear if !(rows && cols) => Err(param_err(
                "method",
                format!("{} needs row and column features", self.name()),
            )),
            _ => Ok(()),
        }
    }
}
