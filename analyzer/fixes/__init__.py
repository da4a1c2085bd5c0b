"""The fixes: edits to source text, the generic bounded-view wrap, writing files atomically and
declaring the engine as a dependency. They call nothing above them."""
