//! Colang 2.x (SPEC 2.4): the parser, its syntax tree, and the lowering onto [`super::flows`].
//! (Being written.)
