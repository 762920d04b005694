// SPDX-License-Identifier: MIT
/*
 * The kernel's choice of NOP table: arch_init_ideal_nops() as it stood from
 * dc326fca2b64 (2011) until a89dfde3dc3c removed it for v5.13, and the
 * fixed x86_nops that replaced it.
 */
#include "noplab/nops.h"

static void choose(struct nl_nop_choice *out, enum nl_nop_family fam, const char *reason)
{
	static const char *const atomic5[] = {
		[NL_FAM_P6] = "p6:atomic5", [NL_FAM_K8] = "k8:atomic5",
		[NL_FAM_K7] = "k7:atomic5", [NL_FAM_GENERIC] = "generic:atomic5",
	};

	out->family = fam;
	out->ftrace_nop = nl_nop_find(atomic5[fam]);
	out->reason = reason;
}

void nl_kernel_ideal_nops(const struct nl_cpu_sig *cpu, enum nl_mode mode,
			  struct nl_nop_choice *out)
{
	bool x86_64 = mode == NL_MODE_64;

	switch (cpu->vendor) {
	case NL_VENDOR_INTEL:
		/* "Due to a decoder implementation quirk" Core 2 .. Sandy Bridge preferred k8 */
		if (cpu->family == 6 && cpu->model >= 0x0f && cpu->model != 0x1c &&
		    cpu->model != 0x26 && cpu->model != 0x27 && cpu->model < 0x30) {
			choose(out, NL_FAM_K8,
			       "Intel family 6 model 0x0f..0x2f (not Atom 0x1c/0x26/0x27): decoder quirk, k8_nops");
		} else if (cpu->has_nopl) {
			choose(out, NL_FAM_P6, "Intel with NOPL: p6_nops");
		} else if (x86_64) {
			choose(out, NL_FAM_K8, "Intel without NOPL, 64-bit kernel: k8_nops");
		} else {
			choose(out, NL_FAM_GENERIC, "Intel without NOPL, 32-bit kernel: intel_nops");
		}
		return;
	case NL_VENDOR_HYGON:
		choose(out, NL_FAM_P6, "Hygon: p6_nops");
		return;
	case NL_VENDOR_AMD:
		if (cpu->family > 0xf) {
			choose(out, NL_FAM_P6, "AMD family 10h and later: p6_nops");
			return;
		}
		/* K8 and older AMD fall through to the default rule, as in the kernel */
		/* fallthrough */
	default:
		if (x86_64)
			choose(out, NL_FAM_K8, "default rule, 64-bit kernel: k8_nops");
		else if (cpu->has_k8)
			choose(out, NL_FAM_K8, "default rule, 32-bit kernel, X86_FEATURE_K8: k8_nops");
		else if (cpu->has_k7)
			choose(out, NL_FAM_K7, "default rule, 32-bit kernel, X86_FEATURE_K7: k7_nops");
		else
			choose(out, NL_FAM_GENERIC, "default rule, 32-bit kernel: intel_nops");
		return;
	}
}

void nl_kernel_fixed_nops(enum nl_mode mode, struct nl_nop_choice *out)
{
	out->family = NL_FAM_X86_NOPS;
	out->ftrace_nop = nl_nop_find(mode == NL_MODE_64 ? "x86_nops:5" : "x86_nops:5/32");
	out->reason = mode == NL_MODE_64 ? "v5.13+: x86_nops, NOPL for every CPU"
					 : "v5.13+: x86_nops, the lea/mov table on 32-bit";
}

const char *nl_vendor_name(enum nl_vendor v)
{
	switch (v) {
	case NL_VENDOR_INTEL: return "Intel";
	case NL_VENDOR_AMD: return "AMD";
	case NL_VENDOR_HYGON: return "Hygon";
	case NL_VENDOR_CENTAUR: return "Centaur";
	case NL_VENDOR_ZHAOXIN: return "Zhaoxin";
	default: return "other";
	}
}
