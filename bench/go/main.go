// Reference server for bench/http.ts: Fabric's own stack, Go net/http and client_golang, shaped
// like Fabric's operations server (core/operations/system.go in hyperledger/fabric): one
// http.Server with a ServeMux for /healthz and /metrics (promhttp over a registry with the Go and
// process collectors), TLS 1.2+ with the client CA pool and client certificates requested but not
// required, as fabric-ops runs in the benchmark. Settings from the environment bench/http.ts passes:
// BENCH_PORT, BENCH_SERIES, BENCH_TLS_CERT / BENCH_TLS_KEY / BENCH_TLS_CA.
//
// Built offline from Debian's packages (golang-go, golang-github-prometheus-client-golang-dev) in
// GOPATH mode: `make bench-prereqs` (GO111MODULE=off GOPATH=/usr/share/gocode go build).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	port, err := strconv.Atoi(os.Getenv("BENCH_PORT"))
	if err != nil || port <= 0 {
		log.Fatalf("BENCH_PORT: not a port: %q", os.Getenv("BENCH_PORT"))
	}
	series, _ := strconv.Atoi(os.Getenv("BENCH_SERIES"))

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bench_series_total", Help: "Series that make /metrics large."}, []string{"component", "index"})
	registry.MustRegister(counter)
	for i := 0; i < series; i++ {
		counter.WithLabelValues(fmt.Sprintf("component%d", i/100), strconv.Itoa(i%100)).Inc()
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := json.Marshal(struct {
			Status string    `json:"status"`
			Time   time.Time `json:"time"`
		}{"OK", time.Now()})
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))

	server := &http.Server{Handler: mux, ReadTimeout: 10 * time.Second, WriteTimeout: 2 * time.Minute}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		log.Fatal(err)
	}
	if certFile := os.Getenv("BENCH_TLS_CERT"); certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, os.Getenv("BENCH_TLS_KEY"))
		if err != nil {
			log.Fatal(err)
		}
		caPEM, err := os.ReadFile(os.Getenv("BENCH_TLS_CA"))
		if err != nil {
			log.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		server.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
		listener = tls.NewListener(listener, server.TLSConfig)
	}
	log.Fatal(server.Serve(listener))
}
