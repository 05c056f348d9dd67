/*
 * Assertions shared by the *layout_check.c files: a structure of this
 * package's headers has the size, member offsets and constant values of
 * its Khronos counterpart.
 */
#ifndef GPUSCATTER_LAYOUT_CHECK_H
#define GPUSCATTER_LAYOUT_CHECK_H

#include <stddef.h>

#define SAME_SIZE(a, b) _Static_assert(sizeof(a) == sizeof(b), "size of " #a)
#define SAME_OFFSET(a, b, m) _Static_assert(offsetof(a, m) == offsetof(b, m), "offset of " #a "." #m)
#define SAME_VALUE(a, b) _Static_assert((a) == (b), #a)

#endif
