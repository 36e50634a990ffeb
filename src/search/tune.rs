//! Texel tuning of the evaluation weights (placeholder until written).
