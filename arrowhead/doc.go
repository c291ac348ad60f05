// Package arrowhead provides the block-arrowhead lower-triangular factor of
// a precision matrix used in Gaussian variational approximation.
package arrowhead
