//! Claim specs: raw serde structs (deny unknown fields) turned into validated claims.
pub mod expr;
