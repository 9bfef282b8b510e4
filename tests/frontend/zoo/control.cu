// Syntax zoo: control flow and expression forms.
__global__ void control(int *data, int *flags, int n)
{
    int i = threadIdx.x;
    switch (data[i]) {
    case 0:
        flags[i] = 1;
        break;
    case 1:
    case 2:
        flags[i] = data[i + 1];
        break;
    default:
        flags[i] = -1;
    }
    int k = 0;
    do {
        data[k] += 1;
        k++;
    } while (k < n);
    if (n < 0)
        goto done;
    data[0] = (flags[0], flags[1]);
    data[1] = n > 2 ? flags[2] : flags[3];
    for (int j = 0, m = n; j < m; ++j, --m)
        data[j] = data[m];
done:
    flags[n] = 0;
}
