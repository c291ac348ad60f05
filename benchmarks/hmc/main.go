// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command hmc draws from the exact posterior of a GLMM by Hamiltonian Monte
// Carlo, an independent reference for glmmfit's figures where no peer gives
// posterior means: every variable at once (the random effects of every
// subject and the global block), on the same model and prior as glmmfit's
// default (-prior auto), with the gradients of package glmm.
//
// The sampler is plain HMC on the model's own variables with a diagonal
// metric: q's variances from a GVA fit to start, re-estimated from the
// first warm-up draws; the step size adapted by dual averaging to an
// acceptance rate of 0.8 during warm-up and fixed after; the number of
// leapfrog steps drawn uniformly up to twice the number that crosses two
// standard deviations. Several chains run from q's mean, each with its
// own stream, and the summaries give R-hat (split, rank-free) and the
// effective draws by batch means.
//
//	go run ./benchmarks/hmc -data ../shared/datasets/grouseticks.csv -family poisson \
//	    -formula 'TICKS ~ factor(YEAR) + cHEIGHT + (1 | BROOD) + (1 | INDEX) + (1 | LOCATION)'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
	"gonum.org/v1/gonum/stat"
)

func main() {
	dataFile := flag.String("data", "", "CSV file")
	form := flag.String("formula", "", "model formula, as glmmfit's -formula")
	family := flag.String("family", "poisson", "poisson, bernoulli, binomial, gaussian or negbinomial")
	ref := flag.String("ref", "", "reference levels, as glmmfit's -ref: col=level[,col=level]")
	local := flag.String("local", "", "the grouping factor of the local blocks (glmmfit's -local; default the one with most levels)")
	chains := flag.Int("chains", 4, "chains")
	warmup := flag.Int("warmup", 1000, "warm-up iterations per chain")
	iters := flag.Int("iter", 2000, "kept iterations per chain")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "", "write the summaries as JSON to this file")
	flag.Parse()
	if *dataFile == "" || *form == "" {
		log.Fatal("hmc: -data and -formula are required")
	}
	fr, err := datasets.ReadFile(*dataFile)
	if err != nil {
		log.Fatal(err)
	}
	f, err := formula.Parse(*form)
	if err != nil {
		log.Fatal(err)
	}
	fam, err := glmm.ParseFamily(*family)
	if err != nil {
		log.Fatal(err)
	}
	opt := formula.Options{Family: fam, Prior: formula.PriorAuto, LocalFactor: *local}
	if *ref != "" {
		opt.Reference = map[string]string{}
		for _, kv := range strings.Split(*ref, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				log.Fatalf("hmc: -ref %q: want col=level", kv)
			}
			opt.Reference[k] = v
		}
	}
	d, err := formula.Build(f, fr, opt)
	if err != nil {
		log.Fatal(err)
	}
	m := d.Model()
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: *seed})
	if err != nil {
		log.Fatal(err)
	}
	n, r, g := m.Dims()
	dim := n*r + g
	// q's variances: the diagonal of each subject's block and of the
	// global block.
	inv := make([]float64, dim)
	lc := res.LocalCov()
	for i := range n {
		for a := range r {
			inv[i*r+a] = lc[i*r*r+a*r+a]
		}
	}
	gc := res.GlobalCov()
	for c := range g {
		inv[n*r+c] = gc.At(c, c)
	}
	start := time.Now()
	var draws [][]float64 // per chain: iters × g, the global block
	var accept []float64
	for c := range *chains {
		ch := newChain(m, res.Mu, inv, *seed, uint64(c))
		draws = append(draws, ch.run(*warmup, *iters))
		accept = append(accept, ch.acceptRate)
		log.Printf("chain %d: step %.4g, %d leapfrog steps at most, acceptance %.2f after warm-up", c+1, ch.eps, 2*ch.steps, ch.acceptRate)
	}
	sum := summarise(d, draws)
	sum.Seconds = time.Since(start).Seconds()
	sum.Chains, sum.Warmup, sum.Iter, sum.Acceptance = *chains, *warmup, *iters, accept
	fmt.Printf("%-32s %10s %9s %8s %7s %6s\n", "", "mean", "sd", "mcse", "ess", "rhat")
	for _, q := range sum.Quantities {
		fmt.Printf("%-32s %10.4f %9.4f %8.4f %7.0f %6.3f\n", q.Name, q.Mean, q.SD, q.MCSE, q.ESS, q.RHat)
	}
	fmt.Printf("%d chains of %d draws after %d warm-up, %.1f s\n", *chains, *iters, *warmup, sum.Seconds)
	if *out != "" {
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// chain is one HMC chain over every variable of m.
type chain struct {
	m      *glmm.Model
	ws     any
	n, r   int
	x, p   []float64 // position and momentum
	grad   []float64
	inv    []float64 // the inverse metric: the variances the momenta are scaled by
	rng    *rand.Rand
	eps    float64
	steps  int // leapfrog steps that cross about two standard deviations
	logp   float64
	trialX []float64
	trialG []float64

	acceptRate float64
}

func newChain(m *glmm.Model, mu, inv []float64, seed, stream uint64) *chain {
	n, r, _ := m.Dims()
	dim := len(mu)
	c := &chain{m: m, ws: m.NewWorkspace(), n: n, r: r, x: append([]float64(nil), mu...), p: make([]float64, dim),
		grad: make([]float64, dim), inv: append([]float64(nil), inv...), rng: rand.New(rand.NewPCG(seed, 0x4a3c+stream)),
		trialX: make([]float64, dim), trialG: make([]float64, dim), eps: 0.1}
	var err error
	if c.logp, err = c.logDensity(c.x, c.grad); err != nil {
		log.Fatal(err)
	}
	return c
}

// logDensity returns log p(x) and writes its gradient into grad.
func (c *chain) logDensity(x, grad []float64) (float64, error) {
	nr := c.n * c.r
	clear(grad)
	lp := c.m.Global(x[nr:], grad[nr:])
	ll, err := c.m.Local(c.ws, 0, c.n, x[nr:], x[:nr], grad[:nr], grad[nr:])
	return lp + ll, err
}

// step takes one HMC transition of about steps leapfrog steps and returns
// its acceptance probability.
func (c *chain) step() float64 {
	for j := range c.p {
		c.p[j] = c.rng.NormFloat64() / math.Sqrt(c.inv[j])
	}
	h0 := c.logp - c.kinetic()
	copy(c.trialX, c.x)
	copy(c.trialG, c.grad)
	l := 1 + c.rng.IntN(2*c.steps)
	lp := c.logp
	for range l {
		for j := range c.p {
			c.p[j] += 0.5 * c.eps * c.trialG[j]
		}
		for j := range c.trialX {
			c.trialX[j] += c.eps * c.inv[j] * c.p[j]
		}
		var err error
		if lp, err = c.logDensity(c.trialX, c.trialG); err != nil || math.IsNaN(lp) {
			return 0
		}
		for j := range c.p {
			c.p[j] += 0.5 * c.eps * c.trialG[j]
		}
	}
	a := math.Min(1, math.Exp(lp-c.kinetic()-h0))
	if math.IsNaN(a) {
		return 0
	}
	if c.rng.Float64() < a {
		copy(c.x, c.trialX)
		copy(c.grad, c.trialG)
		c.logp = lp
	}
	return a
}

func (c *chain) kinetic() float64 {
	var k float64
	for j, p := range c.p {
		k += c.inv[j] * p * p
	}
	return 0.5 * k
}

// run warms the chain up for warmup iterations (the step size by dual
// averaging towards an acceptance of 0.8; the metric from the variances
// of the draws of its middle half) and returns the global blocks of iters
// draws after it.
func (c *chain) run(warmup, iters int) []float64 {
	const target, gamma, t0, kappa = 0.8, 0.05, 10.0, 0.75
	nr := c.n * c.r
	g := len(c.x) - nr
	c.setSteps()
	mu := math.Log(10 * c.eps)
	var hBar, logEpsBar float64
	var sum, sumSq []float64
	var count, k int // k counts the iterations since the last restart
	adapt := func(a float64) {
		k++
		m := float64(k)
		hBar = (1-1/(m+t0))*hBar + (target-a)/(m+t0)
		logEps := mu - math.Sqrt(m)/gamma*hBar
		w := math.Pow(m, -kappa)
		logEpsBar = w*logEps + (1-w)*logEpsBar
		c.eps = math.Exp(logEps)
		c.setSteps()
	}
	for it := range warmup {
		a := c.step()
		adapt(a)
		// The metric from the draws of the warm-up's middle half; then the
		// step size adapts again to it.
		if it >= warmup/4 && it < 3*warmup/4 {
			if sum == nil {
				sum, sumSq = make([]float64, len(c.x)), make([]float64, len(c.x))
			}
			for j, v := range c.x {
				sum[j] += v
				sumSq[j] += v * v
			}
			count++
		}
		if it == 3*warmup/4-1 && count > 10 {
			for j := range c.inv {
				m := sum[j] / float64(count)
				v := sumSq[j]/float64(count) - m*m
				// Shrunk towards q's, as Stan's regularises its
				// estimate towards a multiple of the identity.
				c.inv[j] = (float64(count)*v + 5*c.inv[j]) / float64(count+5)
			}
			mu = math.Log(10 * c.eps)
			hBar, logEpsBar, k = 0, 0, 0
			var err error
			if c.logp, err = c.logDensity(c.x, c.grad); err != nil {
				log.Fatal(err)
			}
		}
	}
	if warmup > 0 {
		c.eps = math.Exp(logEpsBar)
		c.setSteps()
	}
	out := make([]float64, 0, iters*g)
	var acc float64
	for range iters {
		acc += c.step()
		out = append(out, c.x[nr:]...)
	}
	c.acceptRate = acc / float64(max(iters, 1))
	return out
}

// setSteps sets the number of leapfrog steps to cross about two standard
// deviations at the current step size (at most 500).
func (c *chain) setSteps() {
	c.steps = min(500, max(1, int(math.Ceil(2/c.eps))))
}

// quantity is the summary of one parameter over every chain.
type quantity struct {
	Name       string  `json:"name"`
	Mean       float64 `json:"mean"`
	SD         float64 `json:"sd"`
	MCSE       float64 `json:"mcse"`
	ESS        float64 `json:"ess"`
	RHat       float64 `json:"rhat"`
	Q025, Q975 float64 `json:"-"`
}

type summary struct {
	Quantities []quantity `json:"quantities"`
	Chains     int        `json:"chains"`
	Warmup     int        `json:"warmup"`
	Iter       int        `json:"iter"`
	Acceptance []float64  `json:"acceptance"`
	Seconds    float64    `json:"seconds"`
}

// summarise maps each chain's draws of theta_g to the model's parameters,
// as glmmfit reports them (fixed effects on the data's scale, random-effect
// sds, the dispersion, the sds of crossed factors), and summarises them.
func summarise(d *formula.Design, draws [][]float64) *summary {
	m := d.Model()
	_, r, g := m.Dims()
	p := m.P()
	no := glmm.NumOmega(r)
	fm, rs := d.FixedMap(), d.RandomScale()
	_, ysc := d.ResponseScale()
	var names []string
	names = append(names, m.FixedNames()...)
	// Random-effect sds by factor and term, as lme4 names them.
	for _, rn := range m.RandomNames() {
		names = append(names, "sd("+m.GroupName()+":"+rn+")")
	}
	_, hasDisp := m.Dispersion()
	if hasDisp {
		names = append(names, m.Family().DispersionName())
	}
	for c := range m.NumCrossed() {
		name, _, _, _ := m.CrossedFactor(c)
		names = append(names, "sd("+name+":(Intercept))")
	}
	// vals[q][chain] holds the draws of quantity q in chain order.
	vals := make([][][]float64, len(names))
	for q := range vals {
		vals[q] = make([][]float64, len(draws))
	}
	beta := make([]float64, p)
	omega := make([]float64, no)
	for ch, dr := range draws {
		for s := 0; s+g <= len(dr); s += g {
			th := dr[s : s+g]
			if fm != nil {
				fm.Apply(th[:p], beta)
			} else {
				copy(beta, th[:p])
			}
			q := 0
			for _, v := range beta {
				vals[q][ch] = append(vals[q][ch], v)
				q++
			}
			copy(omega, th[p:p+no])
			m.MaskOmega(omega)
			sd, _ := glmm.RESDCorr(omega, r)
			for a, v := range sd {
				if rs != nil {
					v /= rs[a]
				}
				vals[q][ch] = append(vals[q][ch], v)
				q++
			}
			if kd, ok := m.Dispersion(); ok {
				v := math.Exp(th[kd])
				if m.Family() == glmm.Gaussian {
					v *= ysc
				}
				vals[q][ch] = append(vals[q][ch], v)
				q++
			}
			for c := range m.NumCrossed() {
				_, _, _, om := m.CrossedFactor(c)
				vals[q][ch] = append(vals[q][ch], math.Exp(-th[om])*ysc)
				q++
			}
		}
	}
	out := &summary{}
	for q, name := range names {
		out.Quantities = append(out.Quantities, summariseOne(name, vals[q]))
	}
	return out
}

// summariseOne gives the mean, sd, split R-hat and, by batch means within
// each chain, the Monte Carlo standard error and effective draws.
func summariseOne(name string, chains [][]float64) quantity {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	mean, sd := meanSD(all)
	// Split R-hat: each chain's halves as chains.
	var halves [][]float64
	for _, c := range chains {
		h := len(c) / 2
		halves = append(halves, c[:h], c[h:2*h])
	}
	var w, means []float64
	for _, h := range halves {
		m, s := meanSD(h)
		means = append(means, m)
		w = append(w, s*s)
	}
	nh := float64(len(halves[0]))
	wMean, _ := meanSD(w)
	_, bSD := meanSD(means)
	b := nh * bSD * bSD
	rhat := math.Sqrt(((nh-1)/nh*wMean + b/nh) / wMean)
	// Batch means: about sqrt(n) batches per chain.
	var batchMeans []float64
	nb := int(math.Sqrt(float64(len(chains[0]))))
	size := len(chains[0]) / nb
	for _, c := range chains {
		for k := range nb {
			m, _ := meanSD(c[k*size : (k+1)*size])
			batchMeans = append(batchMeans, m)
		}
	}
	_, bmSD := meanSD(batchMeans)
	mcse := bmSD / math.Sqrt(float64(len(batchMeans)))
	ess := float64(len(all))
	if mcse > 0 {
		ess = math.Min(ess, sd*sd/(mcse*mcse))
	}
	sorted := append([]float64(nil), all...)
	sort.Float64s(sorted)
	return quantity{Name: name, Mean: mean, SD: sd, MCSE: mcse, ESS: ess, RHat: rhat,
		Q025: sorted[len(sorted)*25/1000], Q975: sorted[len(sorted)*975/1000]}
}

// meanSD returns the mean and the sample standard deviation of x.
func meanSD(x []float64) (mean, sd float64) { return stat.MeanStdDev(x, nil) }
