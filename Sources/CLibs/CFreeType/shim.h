#include <ft2build.h>
#include <freetype/freetype.h>
#include <freetype/fterrors.h>
#include <freetype/tttables.h>
// FT_LOAD_TARGET_NORMAL is a function-like macro, which does not import into Swift.
static inline FT_Int32 cohost_ft_load_render_normal(void) { return FT_LOAD_RENDER | FT_LOAD_TARGET_NORMAL; }
