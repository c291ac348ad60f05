package main

import (
	"os"

	"github.com/sparsevi/sparsevi/datasets"
)

func main() {
	fr, tr, err := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: 80, Obs: 6, Beta: []float64{0.6, -0.5, 0.3}, RECov: [][]float64{{0.36, 0.06}, {0.06, 0.16}}, Seed: 2026})
	if err != nil {
		panic(err)
	}
	println(tr.Formula)
	f, _ := os.Create("../example.csv")
	datasets.WriteCSV(f, fr)
	f.Close()
}
