module github.com/rqemu/rqemu

go 1.26.0

require (
	github.com/felixge/fgprof v0.9.5
	github.com/klauspost/cpuid/v2 v2.4.2
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
)

require (
	github.com/google/pprof v0.0.0-20240227163752-401108e1b7e7 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)
