package ops

import "math"

// PostgreSQL 15's ln(double precision) (dlog1) and log(double precision) (dlog10) answer the
// C library's log and log10. On the GNU C library of Debian 12 (2.36) log is
// its double-precision log (the table-driven algorithm of Arm's optimized-routines, under
// 0.52 ULP) in the variant the x86-64 build selects on processors with fused multiply-add,
// compiled so that a product feeding a sum is one fused multiply-add; log10 is the older
// fdlibm method on top of it (x = 2^n·m, log10(x) = n·log10(2) + log(m)/ln(10)), built
// without fused multiply-adds. glibcLog and glibcLog10 repeat them operation for operation so
// that every result is the same double, last bit included (Go's math.Log and math.Log10
// differ in the last bit for many values): math.FMA stands where that build fuses, every
// other product and sum is rounded on its own.
//
// log's method: x = 2^k·z with z in [0x1.6p-1, 0x1.6p0) split into 128 subintervals; for the
// one holding z a table gives 1/c and log(c) for a c near its middle, and
// log(x) = k·ln2 + log(c) + log1p(z/c − 1), the last from a degree 6 polynomial in
// r = z/c − 1 (one rounding: r = fma(z, 1/c, −1)). Within [1 − 2^−4, 1 + 0x1.09p−4], where
// that would lose digits to cancellation, log1p(x − 1) comes from a degree 11 polynomial.

// logTableBits is log2 of the number of subintervals of log's table (N = 128).
const logTableBits = 7

// Constants of log, the GNU C library's __log_data: ln2 in two parts, the polynomial of the
// table path (A0..A4, from r^2 up) and that of the path near 1 (B0..B10, from r^2 up).
const (
	logN    = 1 << logTableBits
	logOff  = 0x3fe6000000000000 // bits of 0x1.6p-1, the bottom of z's range
	logLn2h = 0x1.62e42fefa3800p-1
	logLn2l = 0x1.ef35793c76730p-45
)

var (
	logA = [5]float64{-0x1.0000000000001p-1, 0x1.555555551305bp-2, -0x1.fffffffeb459p-3, 0x1.999b324f10111p-3, -0x1.55575e506c89fp-3}
	logB = [11]float64{-0x1p-1, 0x1.5555555555577p-2, -0x1.ffffffffffdcbp-3, 0x1.999999995dd0cp-3, -0x1.55555556745a7p-3,
		0x1.24924a344de3p-3, -0x1.fffffa4423d65p-4, 0x1.c7184282ad6cap-4, -0x1.999eb43b068ffp-4, 0x1.78182f7afd085p-4,
		-0x1.5521375d145cdp-4}
)

// logTab is {1/c, log(c)} for each of log's 128 subintervals, the GNU C library's
// __log_data.tab (log(c) rounded so that k·ln2hi + log(c) is exact).
var logTab = [logN][2]float64{
	{0x1.734f0c3e0de9fp+0, -0x1.7cc7f79e69000p-2},
	{0x1.713786a2ce91fp+0, -0x1.76feec20d0000p-2},
	{0x1.6f26008fab5a0p+0, -0x1.713e31351e000p-2},
	{0x1.6d1a61f138c7dp+0, -0x1.6b85b38287800p-2},
	{0x1.6b1490bc5b4d1p+0, -0x1.65d5590807800p-2},
	{0x1.69147332f0cbap+0, -0x1.602d076180000p-2},
	{0x1.6719f18224223p+0, -0x1.5a8ca86909000p-2},
	{0x1.6524f99a51ed9p+0, -0x1.54f4356035000p-2},
	{0x1.63356aa8f24c4p+0, -0x1.4f637c36b4000p-2},
	{0x1.614b36b9ddc14p+0, -0x1.49da7fda85000p-2},
	{0x1.5f66452c65c4cp+0, -0x1.445923989a800p-2},
	{0x1.5d867b5912c4fp+0, -0x1.3edf439b0b800p-2},
	{0x1.5babccb5b90dep+0, -0x1.396ce448f7000p-2},
	{0x1.59d61f2d91a78p+0, -0x1.3401e17bda000p-2},
	{0x1.5805612465687p+0, -0x1.2e9e2ef468000p-2},
	{0x1.56397cee76bd3p+0, -0x1.2941b3830e000p-2},
	{0x1.54725e2a77f93p+0, -0x1.23ec58cda8800p-2},
	{0x1.52aff42064583p+0, -0x1.1e9e129279000p-2},
	{0x1.50f22dbb2bddfp+0, -0x1.1956d2b48f800p-2},
	{0x1.4f38f4734ded7p+0, -0x1.141679ab9f800p-2},
	{0x1.4d843cfde2840p+0, -0x1.0edd094ef9800p-2},
	{0x1.4bd3ec078a3c8p+0, -0x1.09aa518db1000p-2},
	{0x1.4a27fc3e0258ap+0, -0x1.047e65263b800p-2},
	{0x1.4880524d48434p+0, -0x1.feb224586f000p-3},
	{0x1.46dce1b192d0bp+0, -0x1.f474a7517b000p-3},
	{0x1.453d9d3391854p+0, -0x1.ea4443d103000p-3},
	{0x1.43a2744b4845ap+0, -0x1.e020d44e9b000p-3},
	{0x1.420b54115f8fbp+0, -0x1.d60a22977f000p-3},
	{0x1.40782da3ef4b1p+0, -0x1.cc00104959000p-3},
	{0x1.3ee8f5d57fe8fp+0, -0x1.c202956891000p-3},
	{0x1.3d5d9a00b4ce9p+0, -0x1.b81178d811000p-3},
	{0x1.3bd60c010c12bp+0, -0x1.ae2c9ccd3d000p-3},
	{0x1.3a5242b75dab8p+0, -0x1.a45402e129000p-3},
	{0x1.38d22cd9fd002p+0, -0x1.9a877681df000p-3},
	{0x1.3755bc5847a1cp+0, -0x1.90c6d69483000p-3},
	{0x1.35dce49ad36e2p+0, -0x1.87120a645c000p-3},
	{0x1.34679984dd440p+0, -0x1.7d68fb4143000p-3},
	{0x1.32f5cceffcb24p+0, -0x1.73cb83c627000p-3},
	{0x1.3187775a10d49p+0, -0x1.6a39a9b376000p-3},
	{0x1.301c8373e3990p+0, -0x1.60b3154b7a000p-3},
	{0x1.2eb4ebb95f841p+0, -0x1.5737d76243000p-3},
	{0x1.2d50a0219a9d1p+0, -0x1.4dc7b8fc23000p-3},
	{0x1.2bef9a8b7fd2ap+0, -0x1.4462c51d20000p-3},
	{0x1.2a91c7a0c1babp+0, -0x1.3b08abc830000p-3},
	{0x1.293726014b530p+0, -0x1.31b996b490000p-3},
	{0x1.27dfa5757a1f5p+0, -0x1.2875490a44000p-3},
	{0x1.268b39b1d3bbfp+0, -0x1.1f3b9f879a000p-3},
	{0x1.2539d838ff5bdp+0, -0x1.160c8252ca000p-3},
	{0x1.23eb7aac9083bp+0, -0x1.0ce7f57f72000p-3},
	{0x1.22a012ba940b6p+0, -0x1.03cdc49fea000p-3},
	{0x1.2157996cc4132p+0, -0x1.f57bdbc4b8000p-4},
	{0x1.201201dd2fc9bp+0, -0x1.e370896404000p-4},
	{0x1.1ecf4494d480bp+0, -0x1.d17983ef94000p-4},
	{0x1.1d8f5528f6569p+0, -0x1.bf9674ed8a000p-4},
	{0x1.1c52311577e7cp+0, -0x1.adc79202f6000p-4},
	{0x1.1b17c74cb26e9p+0, -0x1.9c0c3e7288000p-4},
	{0x1.19e010c2c1ab6p+0, -0x1.8a646b372c000p-4},
	{0x1.18ab07bb670bdp+0, -0x1.78d01b3ac0000p-4},
	{0x1.1778a25efbcb6p+0, -0x1.674f145380000p-4},
	{0x1.1648d354c31dap+0, -0x1.55e0e6d878000p-4},
	{0x1.151b990275fddp+0, -0x1.4485cdea1e000p-4},
	{0x1.13f0ea432d24cp+0, -0x1.333d94d6aa000p-4},
	{0x1.12c8b7210f9dap+0, -0x1.22079f8c56000p-4},
	{0x1.11a3028ecb531p+0, -0x1.10e4698622000p-4},
	{0x1.107fbda8434afp+0, -0x1.ffa6c6ad20000p-5},
	{0x1.0f5ee0f4e6bb3p+0, -0x1.dda8d4a774000p-5},
	{0x1.0e4065d2a9fcep+0, -0x1.bbcece4850000p-5},
	{0x1.0d244632ca521p+0, -0x1.9a1894012c000p-5},
	{0x1.0c0a77ce2981ap+0, -0x1.788583302c000p-5},
	{0x1.0af2f83c636d1p+0, -0x1.5715e67d68000p-5},
	{0x1.09ddb98a01339p+0, -0x1.35c8a49658000p-5},
	{0x1.08cabaf52e7dfp+0, -0x1.149e364154000p-5},
	{0x1.07b9f2f4e28fbp+0, -0x1.e72c082eb8000p-6},
	{0x1.06ab58c358f19p+0, -0x1.a55f152528000p-6},
	{0x1.059eea5ecf92cp+0, -0x1.63d62cf818000p-6},
	{0x1.04949cdd12c90p+0, -0x1.228fb8caa0000p-6},
	{0x1.038c6c6f0ada9p+0, -0x1.c317b20f90000p-7},
	{0x1.02865137932a9p+0, -0x1.419355daa0000p-7},
	{0x1.0182427ea7348p+0, -0x1.81203c2ec0000p-8},
	{0x1.008040614b195p+0, -0x1.0040979240000p-9},
	{0x1.fe01ff726fa1ap-1, 0x1.feff384900000p-9},
	{0x1.fa11cc261ea74p-1, 0x1.7dc41353d0000p-7},
	{0x1.f6310b081992ep-1, 0x1.3cea3c4c28000p-6},
	{0x1.f25f63ceeadcdp-1, 0x1.b9fc114890000p-6},
	{0x1.ee9c8039113e7p-1, 0x1.1b0d8ce110000p-5},
	{0x1.eae8078cbb1abp-1, 0x1.58a5bd001c000p-5},
	{0x1.e741aa29d0c9bp-1, 0x1.95c8340d88000p-5},
	{0x1.e3a91830a99b5p-1, 0x1.d276aef578000p-5},
	{0x1.e01e009609a56p-1, 0x1.07598e598c000p-4},
	{0x1.dca01e577bb98p-1, 0x1.253f5e30d2000p-4},
	{0x1.d92f20b7c9103p-1, 0x1.42edd8b380000p-4},
	{0x1.d5cac66fb5ccep-1, 0x1.606598757c000p-4},
	{0x1.d272caa5ede9dp-1, 0x1.7da76356a0000p-4},
	{0x1.cf26e3e6b2ccdp-1, 0x1.9ab434e1c6000p-4},
	{0x1.cbe6da2a77902p-1, 0x1.b78c7bb0d6000p-4},
	{0x1.c8b266d37086dp-1, 0x1.d431332e72000p-4},
	{0x1.c5894bd5d5804p-1, 0x1.f0a3171de6000p-4},
	{0x1.c26b533bb9f8cp-1, 0x1.067152b914000p-3},
	{0x1.bf583eeece73fp-1, 0x1.147858292b000p-3},
	{0x1.bc4fd75db96c1p-1, 0x1.2266ecdca3000p-3},
	{0x1.b951e0c864a28p-1, 0x1.303d7a6c55000p-3},
	{0x1.b65e2c5ef3e2cp-1, 0x1.3dfc33c331000p-3},
	{0x1.b374867c9888bp-1, 0x1.4ba366b7a8000p-3},
	{0x1.b094b211d304ap-1, 0x1.5933928d1f000p-3},
	{0x1.adbe885f2ef7ep-1, 0x1.66acd2418f000p-3},
	{0x1.aaf1d31603da2p-1, 0x1.740f8ec669000p-3},
	{0x1.a82e63fd358a7p-1, 0x1.815c0f51af000p-3},
	{0x1.a5740ef09738bp-1, 0x1.8e92954f68000p-3},
	{0x1.a2c2a90ab4b27p-1, 0x1.9bb3602f84000p-3},
	{0x1.a01a01393f2d1p-1, 0x1.a8bed1c2c0000p-3},
	{0x1.9d79f24db3c1bp-1, 0x1.b5b515c01d000p-3},
	{0x1.9ae2505c7b190p-1, 0x1.c2967ccbcc000p-3},
	{0x1.9852ef297ce2fp-1, 0x1.cf635d5486000p-3},
	{0x1.95cbaeea44b75p-1, 0x1.dc1bd3446c000p-3},
	{0x1.934c69de74838p-1, 0x1.e8c01b8cfe000p-3},
	{0x1.90d4f2f6752e6p-1, 0x1.f5509c0179000p-3},
	{0x1.8e6528effd79dp-1, 0x1.00e6c121fb800p-2},
	{0x1.8bfce9fcc007cp-1, 0x1.071b80e93d000p-2},
	{0x1.899c0dabec30ep-1, 0x1.0d46b9e867000p-2},
	{0x1.87427aa2317fbp-1, 0x1.13687334bd000p-2},
	{0x1.84f00acb39a08p-1, 0x1.1980d67234800p-2},
	{0x1.82a49e8653e55p-1, 0x1.1f8ffe0cc8000p-2},
	{0x1.8060195f40260p-1, 0x1.2595fd7636800p-2},
	{0x1.7e22563e0a329p-1, 0x1.2b9300914a800p-2},
	{0x1.7beb377dcb5adp-1, 0x1.3187210436000p-2},
	{0x1.79baa679725c2p-1, 0x1.377266dec1800p-2},
	{0x1.77907f2170657p-1, 0x1.3d54ffbaf3000p-2},
	{0x1.756cadbd6130cp-1, 0x1.432eee32fe000p-2},
}

// glibcLog is the GNU C library's log (see the comment at the top of this file): the natural
// logarithm, −Inf at ±0, NaN below zero and at NaN, +Inf at +Inf; log(1) = +0.
func glibcLog(x float64) float64 {
	ix := math.Float64bits(x)
	top := uint32(ix >> 48)
	const lo, hi = 0x3fee000000000000, 0x3ff1090000000000 // bits of 1 − 2^−4 and 1 + 0x1.09p−4
	if ix-lo < hi-lo {
		if x == 1 {
			return 0
		}
		return logNear1(x - 1)
	}
	if top-0x0010 >= 0x7ff0-0x0010 {
		switch {
		case ix*2 == 0:
			return math.Inf(-1)
		case math.IsInf(x, 1):
			return x
		case top&0x8000 != 0 || top&0x7ff0 == 0x7ff0:
			return math.NaN()
		}
		ix = math.Float64bits(x*0x1p52) - 52<<52 // subnormal: normalize, keep the exponent
	}
	tmp := ix - logOff
	i := (tmp >> (52 - logTableBits)) % logN
	k := int64(tmp) >> 52
	z := math.Float64frombits(ix - tmp&(0xfff<<52))
	invc, logc := logTab[i][0], logTab[i][1]
	r := math.FMA(z, invc, -1)
	kd := float64(k)
	w := math.FMA(kd, logLn2h, logc)
	h := w + r
	l := math.FMA(kd, logLn2l, w-h+r)
	r2 := r * r
	p := math.FMA(r2, math.FMA(r, logA[4], logA[3]), math.FMA(r, logA[2], logA[1]))
	return math.FMA(float64(r*r2), p, math.FMA(r2, logA[0], l)) + h
}

// logNear1 is log(1 + r) for 1 + r within [1 − 2^−4, 1 + 0x1.09p−4]: r + B0·r² carried in
// two parts (r split so that its square is exact) plus r³ times a polynomial.
func logNear1(r float64) float64 {
	b := &logB
	r2 := r * r
	r3 := r * r2
	p := math.FMA(r3, math.FMA(r3, b[10], math.FMA(r2, b[9], math.FMA(r, b[8], b[7]))), math.FMA(r2, b[6], math.FMA(r, b[5], b[4])))
	p = math.FMA(r3, p, math.FMA(r2, b[3], math.FMA(r, b[2], b[1])))
	w := r * 0x1p27
	rhi := r + w - w
	rlo := r - rhi
	w = float64(rhi*rhi) * b[0]
	hi := r + w
	lo := r - hi + w
	lo = math.FMA(b[0]*rlo, rhi+r, lo)
	y := math.FMA(r3, p, lo)
	return y + hi
}

// Constants of fdlibm's log10: 1/ln(10), and log10(2) in a 40-bit high part and the rest.
const (
	log10Ivln10 = 4.34294481903251816668e-01 // 0x3FDBCB7B1526E50E
	log10Log2hi = 3.01029995663611771306e-01 // 0x3FD34413509F6000
	log10Log2lo = 3.69423907715893078616e-13 // 0x3D59FEF311F12B36
	log10Two54  = 1.80143985094819840000e+16 // 2^54
)

// glibcLog10 is the GNU C library's log10 (see the comment at the top of this file): −Inf at
// ±0, NaN below zero and at NaN, +Inf at +Inf; exact at the powers of ten up to 10^22.
func glibcLog10(x float64) float64 {
	bits := math.Float64bits(x)
	hx, lx := int32(bits>>32), uint32(bits)
	k := int32(0)
	if hx < 0x00100000 {
		switch {
		case (hx&0x7fffffff)|int32(lx) == 0:
			return math.Inf(-1)
		case hx < 0:
			return math.NaN()
		}
		k -= 54
		x *= log10Two54
		hx = int32(math.Float64bits(x) >> 32)
	}
	if hx >= 0x7ff00000 {
		return x + x
	}
	k += hx>>20 - 1023
	i := int32(uint32(k) >> 31)
	hx = hx&0x000fffff | (0x3ff-i)<<20
	y := float64(k + i)
	x = math.Float64frombits(uint64(uint32(hx))<<32 | math.Float64bits(x)&0xffffffff)
	z := float64(y*log10Log2lo) + float64(log10Ivln10*glibcLog(x))
	return z + float64(y*log10Log2hi)
}
