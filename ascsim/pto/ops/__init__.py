"""PyPTO Pro's tile operations, each mapped onto instruction records (:mod:`ascsim.isa`)."""
