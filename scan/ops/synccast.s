// Empty: lets synccast.go declare arrowCastFunction, a go:linkname to arrow-go's compute.getCastFunction, without a body.
