#include <sys/stropts.h>
