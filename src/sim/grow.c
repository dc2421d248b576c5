/* grow.c - grow_array() (see grow.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

int grow_array(void **arr, size_t *cap, size_t used, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : (first ? first : 16);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -1;
#ifdef TLBSIM_POISON_GROWTH
	void *n = malloc(ncap * elem);
	if (!n)
		return -1;
	if (*arr) {
		memcpy(n, *arr, used * elem);
		memset(*arr, 0xdb, *cap * elem);
		free(*arr);
	}
#else
	(void)used;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -1;
#endif
	*arr = n;
	*cap = ncap;
	return 0;
}
